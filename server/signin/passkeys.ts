import { isIP } from 'node:net';
import type { Request } from 'express';
import { createExpiringMap, originAllowed, plainHttpLoginAllowed, userSubject, type AccountService } from '../access/api.js';
import type { AuditLog } from '../audit.js';
import { currentContext } from '../http/request-context.js';
import type { AppContext } from '../context.js';
import type { Passkey } from '../contract/signin.js';
import { badRequest, conflict, HttpError, notFound } from '../errors.js';
import type { SessionRef, SessionUser } from '../http/credentials.js';
import { isoSeconds } from '../time.js';
import { presentPasskey } from './present.js';
import type { PasskeyRow, SignInRepo } from './repo.js';

const MAX_PASSKEYS = 20;
/** A WebAuthn prompt the person does not answer within 5 minutes has to be started again. */
export const CHALLENGE_MS = 5 * 60 * 1000;

type WebAuthn = typeof import('@simplewebauthn/server');
let webauthn: Promise<WebAuthn> | undefined;
// Loaded on first use only: the library and its ASN.1 parsers stay out of a server nobody registers a passkey on.
export const loadWebAuthn = () => (webauthn ??= import('@simplewebauthn/server'));

export interface RelyingParty {
  rpID: string;
  origin: string;
}


/** The challenge the browser signed, from the answer's clientDataJSON; the library checks the rest. */
export function challengeOf(response: Record<string, unknown>): string | undefined {
  const inner = response.response as Record<string, unknown>;
  if (typeof inner.clientDataJSON !== 'string' || inner.clientDataJSON.length > 4096) return undefined;
  try {
    const data = JSON.parse(Buffer.from(inner.clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof data.challenge === 'string' ? data.challenge : undefined;
  } catch {
    return undefined;
  }
}

export const notVerified = () => new HttpError(401, { error: 'the passkey could not be verified' });

/** Passkeys (WebAuthn): several per account, named, removable; signing in with one counts as both factors. */
export function createPasskeys(ctx: Pick<AppContext, 'clock' | 'config' | 'transaction'>, accounts: AccountService, repo: SignInRepo, audit: AuditLog) {
  const { clock, config, transaction } = ctx;
  // Registration challenges by session: only a signed-in account that confirmed its password adds one, one per session.
  const registering = createExpiringMap<RelyingParty & { challenge: string }>(clock, CHALLENGE_MS, 10_000);

  /**
   * "The relying party ID is the host of the configured origin", or in loopback development the
   * host the browser is on: a name, since browsers refuse an IP address as a relying party ID.
   */
  /**
   * A passkey added since the previous password was set is marked: whoever held that password or a
   * session under it could have added it, and it outlives the change that ended those sessions.
   */
  const passwordSetAt = (accountId: number) => {
    const account = accounts.repo.byId(accountId);
    return account?.previous_password_changed_at ?? account?.password_changed_at ?? account?.created_at ?? '';
  };
  const present = (row: PasskeyRow) => presentPasskey(row, passwordSetAt(row.account_id));

  function relyingParty(req: Request): RelyingParty {
    if (config.publicOrigin) return { rpID: new URL(config.publicOrigin).hostname, origin: config.publicOrigin };
    const origin = req.get('origin');
    if (origin && originAllowed(config, req)) {
      const rpID = new URL(origin).hostname;
      if (!isIP(rpID.replace(/^\[|\]$/g, ''))) return { rpID, origin };
    }
    throw badRequest('passkeys need a host name: open homefleet at its configured origin (FLEET_PUBLIC_URL), or at http://localhost:<port> in development');
  }

  return {
    relyingParty,

    /** Whether the page at this address can use passkeys (GET /api/auth/methods carries no Origin: the Host tells). */
    available(req: Request): boolean {
      if (config.publicOrigin) return true;
      const loopback = plainHttpLoginAllowed(config, req) || (config.tlsNames !== undefined && req.secure);
      return loopback && isIP(req.hostname.replace(/^\[|\]$/g, '')) === 0;
    },

    list: (accountId: number): Passkey[] => repo.passkeys(accountId).map(present),

    async registrationOptions(user: SessionUser, session: SessionRef, req: Request) {
      const { generateRegistrationOptions } = await loadWebAuthn();
      const rp = relyingParty(req);
      const existing = repo.passkeys(user.id);
      if (existing.length >= MAX_PASSKEYS) throw conflict(`at most ${MAX_PASSKEYS} passkeys per account; remove one first`);
      const options = await generateRegistrationOptions({
        rpName: 'homefleet',
        rpID: rp.rpID,
        userName: user.username,
        userID: new TextEncoder().encode(`homefleet-account-${user.id}`),
        attestationType: 'none',
        excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: JSON.parse(p.transports) as string[] })),
        // A passkey stands for both factors: it must be discoverable and must check its holder (PIN, biometrics).
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
      registering.put(String(session.id), { ...rp, challenge: options.challenge });
      audit.write({ action: 'request', subject: userSubject(user), summary: `${user.username} started adding a passkey` });
      return options;
    },

    async register(user: SessionUser, session: SessionRef, name: string, response: Record<string, unknown>): Promise<Passkey> {
      const waiting = registering.take(String(session.id));
      if (!waiting) throw badRequest('no passkey registration is waiting; start again');
      const { verifyRegistrationResponse } = await loadWebAuthn();
      let verified;
      try {
        verified = await verifyRegistrationResponse({
          response: response as never,
          expectedChallenge: waiting.challenge,
          expectedOrigin: waiting.origin,
          expectedRPID: waiting.rpID,
          requireUserVerification: true,
        });
      } catch {
        verified = undefined;
      }
      if (!verified?.verified) throw badRequest('the passkey could not be verified; try again');
      const { credential } = verified.registrationInfo;
      return transaction(() => {
        if (repo.passkeyByCredential(credential.id)) throw conflict('this passkey is already registered');
        if (repo.passkeys(user.id).length >= MAX_PASSKEYS) throw conflict(`at most ${MAX_PASSKEYS} passkeys per account; remove one first`);
        const id = repo.addPasskey({
          account_id: user.id,
          credential_id: credential.id,
          public_key: Buffer.from(credential.publicKey),
          counter: credential.counter,
          transports: credential.transports ?? [],
          name,
          created_at: isoSeconds(clock.now()),
        });
        audit.write({ action: 'passkey.add', subject: userSubject(user), summary: `${user.username} added passkey “${name}”`, detail: { passkey_id: id, name } });
        return present(repo.passkey(id, user.id)!);
      })();
    },

    rename(user: SessionUser, id: number, name: string): Passkey {
      return transaction(() => {
        const row = repo.passkey(id, user.id);
        if (!row) throw notFound('passkey not found');
        repo.renamePasskey(id, name);
        audit.write({
          action: 'passkey.rename', subject: userSubject(user),
          summary: `${user.username} renamed passkey “${row.name}” to “${name}”`, changes: [{ field: 'name', before: row.name, after: name }], detail: { passkey_id: id },
        });
        return present(repo.passkey(id, user.id)!);
      })();
    },

    remove(user: SessionUser, id: number): void {
      transaction(() => {
        const row = repo.passkey(id, user.id);
        if (!row) throw notFound('passkey not found');
        repo.deletePasskey(id);
        audit.write({ action: 'passkey.remove', subject: userSubject(user), summary: `${user.username} removed passkey “${row.name}”`, detail: { passkey_id: id } });
      })();
    },
  };
}

export type Passkeys = ReturnType<typeof createPasskeys>;
