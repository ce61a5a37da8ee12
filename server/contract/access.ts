import type { Passkey } from './signin.js';

/** Capability names of PRODUCT.md's table. */
export const CAPABILITIES = [
  'fleet.read',
  'diagnostics.read',
  'fleet.operate',
  'content.read',
  'content.manage',
  'hosts.read',
  'hosts.manage',
  'settings.manage',
  'users.manage',
  'self',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const ROLES = ['viewer', 'operator', 'administrator'] as const;
export type Role = (typeof ROLES)[number];

/** PRODUCT.md's capability table, row for row: which roles hold each capability. */
export const ROLE_TABLE: Readonly<Record<Capability, readonly Role[]>> = {
  'fleet.read': ['viewer', 'operator', 'administrator'],
  'diagnostics.read': ['operator', 'administrator'],
  'fleet.operate': ['operator', 'administrator'],
  'content.read': ['viewer', 'operator', 'administrator'],
  'content.manage': ['operator', 'administrator'],
  'hosts.read': ['viewer', 'operator', 'administrator'],
  'hosts.manage': ['administrator'],
  'settings.manage': ['administrator'],
  'users.manage': ['administrator'],
  self: ['viewer', 'operator', 'administrator'],
};

export function roleHas(role: Role, capability: Capability): boolean {
  return ROLE_TABLE[capability].includes(role);
}

/** Roles in order of their rights: a token's role may be no higher than its creator's. */
export const roleRank = (role: Role): number => ROLES.indexOf(role);
/** The lower of two roles: a token never has more rights than its owner has now. */
export const lowerRole = (a: Role, b: Role): Role => (roleRank(a) <= roleRank(b) ? a : b);

/** An account as the API shows it: never a hash. */
export interface Account {
  id: number;
  username: string;
  display_name: string;
  role: Role;
  enabled: boolean;
  must_change_password: boolean;
  created_at: string;
  last_login_at: string | null;
}

/** The answer of POST /api/auth/login, POST /setup (JSON) and PATCH /api/users/:id. */
export interface UserAnswer {
  user: Account;
}

/** GET /api/auth/session: the signed-in account and when the session ends (absolutely, and if left idle). */
export interface SessionAnswer extends UserAnswer {
  expires_at: string;
  idle_expires_at: string;
  /** FLEET_REQUIRE_2FA applies and no second factor is set up yet: nothing else works until one is. */
  second_factor_required: boolean;
}

/** A second step of a password sign-in: a code from the authenticator app (or a recovery code), or one of the account's passkeys. */
export type SecondFactorKind = 'totp' | 'passkey';

/**
 * The 200 of POST /api/auth/login for an account with TOTP or a passkey: no session yet, only the
 * pending cookie. POST /api/auth/login/totp, or POST /api/auth/login/passkey/options and then
 * POST /api/auth/login/passkey, completes it.
 */
export interface SecondFactorAsked {
  /** The step to ask for first: `totp` whenever TOTP is on (what clients from before passkeys read), else `passkey`. */
  second_factor: SecondFactorKind;
  /** Every step that completes this sign-in, `second_factor` first. */
  second_factors: SecondFactorKind[];
}

/** POST /api/users/:id/reset-password; with `user`, the answer of POST /api/users. */
export interface TemporaryPassword {
  temporary_password: string;
}

export interface CreatedUser extends UserAnswer, TemporaryPassword {}
