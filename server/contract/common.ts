/** What every route shares: the error answer, the health check (the paged lists' query: inputs/page.ts). */

/** One field's problem: `field` is a dotted path (`config.api_url`, `instances[3].vmid`), `body` for the body itself. */
export interface FieldError {
  field: string;
  message: string;
  /** A bulk edit's error: the instance whose result is invalid. */
  vmid?: number;
}

/** Every 4xx and 5xx answer: a sentence, or for a 400 of validation the field errors. */
export interface ErrorBody {
  error?: string;
  errors?: FieldError[];
}

/** GET /api/health */
export interface Health {
  status: 'ok';
  version: string;
}
