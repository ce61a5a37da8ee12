import * as z from 'zod';
import type * as wire from '../contract/common.js';
import { shared, type Agrees, type Same } from './validate.js';

/** `limit` of the lists of alerts and deliveries: a whole number from 1 to 1000 (each list has its own default). */
export const LimitParam = shared(() =>
  z
    .string()
    .regex(/^\d{1,4}$/, { error: 'must be a whole number from 1 to 1000' })
    .transform(Number)
    .pipe(z.number().min(1, { error: 'must be a whole number from 1 to 1000' }).max(1000, { error: 'must be a whole number from 1 to 1000' })),
);

/** `limit` (default 100, at most 1000) and `before` (an id) of the paged lists: audit and telemetry. */
export const PageQuery = z.lazy(() =>
  z.object({
    limit: z
      .string()
      .regex(/^\d{1,5}$/, 'must be an integer from 1 to 1000')
      .transform(Number)
      .pipe(z.number().int().min(1, 'must be an integer from 1 to 1000').max(1000, 'must be an integer from 1 to 1000'))
      .optional()
      .transform((v) => v ?? 100),
    before: z
      .string()
      .regex(/^\d{1,15}$/, 'must be a positive integer')
      .transform(Number)
      .optional(),
  }),
);
export type PageQuery = wire.PageQuery;
type _PageQuery = Agrees<Same<z.infer<typeof PageQuery>, wire.PageQuery>>;
