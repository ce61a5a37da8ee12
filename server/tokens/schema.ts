import * as z from 'zod';
import { ROLES } from '../contract/access.js';
import type * as wire from '../contract/tokens.js';
import { oneOf, shared, type Agrees, type Same } from '../http/validate.js';

const RoleName = shared(() => oneOf(ROLES));

// The wire types are written once, in server/contract; the schemas below are checked against them
// (the views only describe the answers for the API document).

/** `POST /api/tokens`: a name, a role no higher than the creator's own, an optional expiry in the future. */
export const TokenCreateBody = z.lazy(() =>
  z.object({
    name: z
      .string({ error: 'is required' })
      .trim()
      .min(1, { error: 'is required', abort: true })
      .max(100, 'must be at most 100 characters'),
    role: RoleName(),
    expires_at: z
      .iso.datetime({ offset: true, error: 'must be an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z' })
      .nullish()
      .describe('when the token stops working; omitted or null: never'),
  }),
);
export type TokenCreateBody = wire.TokenCreate;

/** `GET /api/tokens?user=all`: administrators list everyone's tokens. */
export const TokenListQuery = z.lazy(() =>
  z.object({
    user: z.enum(['all'], { error: 'must be all' }).optional(),
  }),
);
export type TokenListQuery = wire.TokenListQuery;

/** A token as the API shows it: never the token or its hash. */
export const ApiTokenView = z.lazy(() =>
  z.object({
    id: z.int(),
    name: z.string(),
    role: RoleName(),
    user: z.object({ id: z.int(), username: z.string() }),
    created_at: z.string().describe('ISO 8601 UTC, seconds'),
    expires_at: z.string().nullable().describe('ISO 8601 UTC; null: never'),
    last_used_at: z.string().nullable().describe('ISO 8601 UTC; recorded at most once a minute'),
    last_used_ip: z.string().nullable(),
  }),
);
type _ApiToken = Agrees<Same<z.infer<typeof ApiTokenView>, wire.ApiToken>>;

/** The 201 answer of `POST /api/tokens`: the token itself, this once. */
export const CreatedApiTokenView = z.lazy(() => ApiTokenView.unwrap().extend({ token: z.string().describe('hfp_…: shown this once, never again') }));
