import * as z from 'zod';
import { ROLES } from '../access.js';
import { oneOf } from './parts.js';

/** POST /api/tokens: a name, a role no higher than the creator's own, an optional expiry in the future. */
export const TokenCreateBody = z.lazy(() =>
  z.object({
    name: z
      .string({ error: 'is required' })
      .trim()
      .min(1, { error: 'is required', abort: true })
      .max(100, 'must be at most 100 characters'),
    role: oneOf(ROLES),
    expires_at: z
      .iso.datetime({ offset: true, error: 'must be an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z' })
      .nullish()
      .describe('when the token stops working; omitted or null: never'),
  }),
);
export type TokenCreate = z.output<typeof TokenCreateBody>;

/** GET /api/tokens?user=all: administrators list everyone's tokens. */
export const TokenListQuery = z.lazy(() =>
  z.object({
    user: z.enum(['all'], { error: 'must be all' }).optional(),
  }),
);
export type TokenListQuery = z.output<typeof TokenListQuery>;
