import * as z from 'zod';
import { shared } from './parts.js';

/**
 * `limit` of every list that takes one: a whole number from 1 to `max` (1000 unless the list says),
 * `fallback` when absent. A bad one is the usual 400 `{"errors":[{"field":"limit","message":...}]}`.
 */
export function limitParam(fallback: number, max = 1000) {
  const message = `must be a whole number from 1 to ${max}`;
  return z
    .string({ error: message })
    .regex(/^\d{1,7}$/, { error: message })
    .transform(Number)
    .pipe(z.number().min(1, { error: message }).max(max, { error: message }))
    .optional()
    .transform((v) => v ?? fallback)
    .describe(`1 to ${max} (default ${fallback})`);
}

/** An id given in a query (`before`, `host_id`): a positive integer. */
export const idQuery = shared(() =>
  z
    .string({ error: 'must be a positive integer' })
    .regex(/^[1-9]\d{0,14}$/, { error: 'must be a positive integer' })
    .transform(Number),
);

/** `limit` and `before` (an id: only entries older than it, the next page) of the paged lists. */
export function pageQuery(fallback: number, max = 1000) {
  return z.object({ limit: limitParam(fallback, max), before: idQuery().optional().describe('only entries with a smaller id (the next page)') });
}

/** The paged lists of 100 (audit, telemetry). */
export const PageQuery = z.lazy(() => pageQuery(100));
export type PageQuery = z.output<typeof PageQuery>;
/**
 * `?limit=&before=` of the paged lists (audit, telemetry, usage) as a client sends them: newest first,
 * the next page is `before` the last id.
 */
export type PageQueryInput = z.input<typeof PageQuery>;
