/** What every route shares: the error answer, the paged lists, the health check. */

/** One field's problem: `field` is a dotted path (`config.api_url`, `instances[3].vmid`), `body` for the body itself. */
export interface FieldError {
  field: string;
  message: string;
}

/** Every 4xx and 5xx answer: a sentence, or for a 400 of validation the field errors. */
export interface ErrorBody {
  error?: string;
  errors?: FieldError[];
}

/**
 * `?limit=&before=` of the paged lists (audit, telemetry, usage) as a client sends them: `limit` 1 to
 * 1000 (100 when absent), `before` an id; newest first, the next page is `before` the last id.
 */
export interface PageQueryInput {
  limit?: string;
  before?: string;
}

/** GET /api/health */
export interface Health {
  status: 'ok';
  version: string;
}
