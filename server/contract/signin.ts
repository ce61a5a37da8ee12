/** GET /api/auth/methods (public): what the sign-in page offers. */
export interface SignInMethods {
  /** false with FLEET_OIDC_ONLY=true. */
  password: boolean;
  /** The provider's button label ("Sign in with <name>"), or null when single sign-on is not configured. */
  oidc: { name: string } | null;
  /** Passkeys work at the address the browser is on (a host name: the configured origin, or localhost). */
  passkeys: boolean;
}

/** GET /api/users/second-factors (users.manage): each account's second factors, for the Users page; never a secret. */
export interface UserSecondFactors {
  user_id: number;
  /** A confirmed TOTP factor. */
  totp: boolean;
  passkeys: number;
  /** Signs in through the single sign-on provider (whose own factors apply). */
  oidc: boolean;
}

/** GET /api/auth/totp: whether the own account has a TOTP second factor; never the secret. */
export interface TotpStatus {
  enabled: boolean;
  recovery_codes_left: number;
}

/** POST /api/auth/totp/setup: the new secret (160 random bits, base32), shown this once, and the QR code of its otpauth:// URL. */
export interface TotpSetup {
  secret: string;
  otpauth_url: string;
  /** An SVG image of `otpauth_url` as a QR code, as a data: URL. */
  qr_code: string;
}

/** The answer of POST /api/auth/totp/confirm: 10 single-use codes, shown this once. */
export interface RecoveryCodes {
  recovery_codes: string[];
}

/** A registered passkey as the API shows it: never the key. */
export interface Passkey {
  id: number;
  name: string;
  created_at: string;
  last_used_at: string | null;
  /**
   * Added since the password before the current one was set (or since the account was made): the own-account
   * and password pages mark it, so a passkey added with a stolen password or session is seen after the change.
   */
  added_since_password_change: boolean;
}
