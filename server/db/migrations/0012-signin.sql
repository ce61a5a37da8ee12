-- Sign-in beyond passwords (server/signin): accounts linked to an OpenID Connect provider, TOTP second
-- factors with their recovery codes, and passkeys. Each row belongs to its account and goes with it.

-- An account is linked by the provider's issuer and subject only, never by e-mail or username.
CREATE TABLE oidc_identities (
  account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (issuer, subject)
) STRICT;

CREATE INDEX oidc_identities_account ON oidc_identities (account_id);

-- The TOTP secret (base32, as the authenticator app holds it: a code cannot be checked from a hash).
-- `confirmed_at` is null while setup waits for the first code; `last_step` is the 30-second step of the
-- last code accepted, so each code is accepted once.
CREATE TABLE totp_factors (
  account_id INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  secret TEXT NOT NULL,
  created_at TEXT NOT NULL,
  confirmed_at TEXT,
  last_step INTEGER NOT NULL DEFAULT 0
) STRICT;

-- Only the SHA-256 of a recovery code is stored; each is used once.
CREATE TABLE recovery_codes (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL UNIQUE,
  used_at TEXT
) STRICT;

CREATE INDEX recovery_codes_account ON recovery_codes (account_id);

-- WebAuthn credentials: the public key and signature counter the authenticator registered.
CREATE TABLE passkeys (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  credential_id TEXT NOT NULL UNIQUE,
  public_key BLOB NOT NULL,
  counter INTEGER NOT NULL DEFAULT 0,
  transports TEXT NOT NULL DEFAULT '[]',
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT
) STRICT;

CREATE INDEX passkeys_account ON passkeys (account_id);
