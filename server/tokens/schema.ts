import { z } from 'zod';
import { RoleName } from '../access/schema.js';

/** `POST /api/tokens`: a name, a role no higher than the creator's own, an optional expiry in the future. */
export const TokenCreateBody = z.object({
  name: z
    .string({ error: 'is required' })
    .trim()
    .min(1, { error: 'is required', abort: true })
    .max(100, 'must be at most 100 characters'),
  role: RoleName,
  expires_at: z
    .iso.datetime({ offset: true, error: 'must be an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z' })
    .nullish()
    .describe('when the token stops working; omitted or null: never'),
});
export type TokenCreateBody = z.infer<typeof TokenCreateBody>;

/** `GET /api/tokens?user=all`: administrators list everyone's tokens. */
export const TokenListQuery = z.object({
  user: z.enum(['all'], { error: 'must be all' }).optional(),
});
export type TokenListQuery = z.infer<typeof TokenListQuery>;

/** A token as the API shows it: never the token or its hash. */
export interface ApiToken {
  id: number;
  name: string;
  role: 'viewer' | 'operator' | 'administrator';
  user: { id: number; username: string };
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
}

/** The 201 answer of `POST /api/tokens`: the token itself, this once. */
export type CreatedApiToken = ApiToken & { token: string };
