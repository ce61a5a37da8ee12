import * as z from 'zod';
import { ROLES } from '../contract/access.js';
import { oneOf, shared } from '../http/validate.js';

const RoleName = shared(() => oneOf(ROLES));

// The answers as the API document describes them; the route binding holds each to its declared type.

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

/** The 201 answer of `POST /api/tokens`: the token itself, this once. */
export const CreatedApiTokenView = z.lazy(() => ApiTokenView.unwrap().extend({ token: z.string().describe('hfp_…: shown this once, never again') }));
