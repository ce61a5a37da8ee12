import type { Request } from 'express';
import type { AccountService } from '../access/accounts.js';
import type { AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Role } from '../contract/access.js';
import type { SignInMethods } from '../contract/signin.js';
import type { Principal } from '../http/credentials.js';
import { createOidc } from './oidc.js';
import { createPasskeys } from './passkeys.js';
import type { SignInRepo } from './repo.js';
import { createTotp } from './totp.js';

/**
 * Sign-in beyond the password: single sign-on, TOTP, passkeys, and FLEET_REQUIRE_2FA. Each ends in
 * the session a password login opens (access's openSession), throttled and audited the same way.
 */
export function createSignIn(ctx: AppContext, accounts: AccountService, audit: AuditLog, repo: SignInRepo) {
  const { config } = ctx;
  const inScope = (role: Role) => config.require2fa === 'all' || (config.require2fa === 'administrators' && role === 'administrator');
  const passkeys = createPasskeys(ctx, accounts, repo, audit);

  return {
    repo,
    totp: createTotp(ctx, accounts, repo, audit),
    passkeys,
    oidc: createOidc(ctx, accounts, repo, audit),

    methods: (req: Request): SignInMethods => ({
      password: !config.oidc?.only,
      oidc: config.oidc ? { name: config.oidc.name } : null,
      passkeys: passkeys.available(req),
    }),

    /**
     * FLEET_REQUIRE_2FA on a resolved session or token: an account in scope without a second factor
     * is marked, and the authentication step lets it only set one up ("as with a temporary password").
     * One indexed look-up per request, and none at all while the setting is off.
     */
    gate<P extends Principal>(principal: P | undefined): P | undefined {
      if (!principal || config.require2fa === 'off' || !inScope(principal.user.role) || repo.hasSecondFactor(principal.user.id)) return principal;
      return { ...principal, secondFactorRequired: true };
    },
  };
}

export type SignIn = ReturnType<typeof createSignIn>;
