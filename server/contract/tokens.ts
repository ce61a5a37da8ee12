import type { Role } from './access.js';

/** A personal API token as the API shows it: never the token or its hash. */
export interface ApiToken {
  id: number;
  name: string;
  role: Role;
  user: { id: number; username: string };
  /** ISO 8601 UTC, seconds. */
  created_at: string;
  /** ISO 8601 UTC; null: never. */
  expires_at: string | null;
  /** ISO 8601 UTC; recorded at most once a minute. */
  last_used_at: string | null;
  last_used_ip: string | null;
}

/** The 201 of POST /api/tokens: the `hfp_` token itself, shown this once. */
export interface CreatedApiToken extends ApiToken {
  token: string;
}
