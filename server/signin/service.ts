import type { Request } from 'express';
import { createSealer, verifyPassword, type AccountService, type ThrottleKey } from '../access/api.js';
import type { AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Role } from '../contract/access.js';
import type { PasskeyProof } from '../contract/inputs/signin.js';
import type { SignInMethods, UserSecondFactors } from '../contract/signin.js';
import { HttpError, validationFailed } from '../errors.js';
import type { Principal, SessionRef, SessionUser } from '../http/credentials.js';
import { createOidc } from './oidc.js';
import { createPasskeySignIn } from './passkey-signin.js';
import { createPasskeys } from './passkeys.js';
import type { SignInRepo } from './repo.js';
import { createTotp } from './totp.js';

/** How recent a single sign-on must be to stand for a password its account does not have. */
const FRESH_SIGN_IN_MS = 5 * 60 * 1000;

/**
 * Sign-in beyond the password: single sign-on, TOTP, passkeys, and FLEET_REQUIRE_2FA. Each ends in
 * the session a password login opens (access's openSession), throttled and audited the same way.
 */
export function createSignIn(ctx: AppContext, accounts: AccountService, audit: AuditLog, repo: SignInRepo) {
  const { config } = ctx;
  const inScope = (role: Role) => config.require2fa === 'all' || (config.require2fa === 'administrators' && role === 'administrator');
  // Signs the sign-in steps' cookies (server/access/sealed.ts).
  const sealer = createSealer(ctx.clock);
  const passkeys = createPasskeys(ctx, accounts, repo, audit);
  const totp = createTotp(ctx, accounts, repo, audit);

  return {
    repo,
    totp,
    passkeys,
    passkeySignIn: createPasskeySignIn(ctx, accounts, repo, audit, sealer, passkeys.relyingParty),

    /**
     * Before a passkey is added: the password, or a current code of the authenticator app, so a
     * stolen session cannot add a passkey that outlives the password change revoking it (issue 34).
     * Wrong answers count in the account's password-verification window, as a password change's do.
     * An account of the single sign-on provider has no password of its own: without TOTP, a sign-in
     * with the provider in the last 5 minutes stands for it.
     */
    async confirmIdentity(user: SessionUser, session: SessionRef, proof: PasskeyProof): Promise<void> {
      if (proof.password === undefined && proof.code === undefined) {
        const fresh = ctx.clock.now() - session.created_at < FRESH_SIGN_IN_MS;
        if (fresh && repo.linkedToProvider(user.id) && !repo.confirmedTotp(user.id)) return;
        throw validationFailed([{ field: 'password', message: 'is required: confirm it is you with your password or a code from your authenticator app' }]);
      }
      const slot: ThrottleKey = ['password.account', String(user.id)];
      accounts.takeSlot(slot);
      const row = accounts.repo.byId(user.id);
      const ok = proof.password !== undefined ? row !== undefined && (await verifyPassword(proof.password, row.password_hash)) : await totp.useCode(user.id, proof.code!);
      if (!ok) throw new HttpError(401, { error: proof.password !== undefined ? 'wrong password' : 'invalid code' });
      accounts.throttle.release([slot]);
    },
    oidc: createOidc(ctx, accounts, repo, audit, sealer),

    /** Every account's second factors, the accounts as access lists them (it owns them). */
    factorsOfAll: (): UserSecondFactors[] => repo.factorsOf(accounts.repo.list().map((a) => a.id)),

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
