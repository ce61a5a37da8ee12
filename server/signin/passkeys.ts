import { isIP } from 'node:net';
import type { Request } from 'express';
import type { AccountService } from '../access/accounts.js';
import { from, userSubject } from '../access/accounts.js';
import { createExpiringMap } from '../access/expiring.js';
import { originAllowed, plainHttpLoginAllowed } from '../access/origin.js';
import type { ThrottleKey } from '../access/throttle.js';
import type { Actor, AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Passkey } from '../contract/signin.js';
import { badRequest, conflict, HttpError, notFound } from '../errors.js';
import type { SessionRef, SessionUser } from '../http/credentials.js';
import { isoSeconds } from '../time.js';
import type { PasskeyRow, SignInRepo } from './repo.js';

const MAX_PASSKEYS = 20;
/** A WebAuthn prompt the person does not answer within 5 minutes has to be started again. */
const CHALLENGE_MS = 5 * 60 * 1000;

type WebAuthn = typeof import('@simplewebauthn/server');
let webauthn: Promise<WebAuthn> | undefined;
// Loaded on first use only: the library and its ASN.1 parsers stay out of a server nobody registers a passkey on.
const loadWebAuthn = () => (webauthn ??= import('@simplewebauthn/server'));

interface RelyingParty {
  rpID: string;
  origin: string;
}

export const presentPasskey = (row: PasskeyRow): Passkey => ({ id: row.id, name: row.name, created_at: row.created_at, last_used_at: row.last_used_at });

/** The challenge the browser signed, from the answer's clientDataJSON; the library checks the rest. */
function challengeOf(response: Record<string, unknown>): string | undefined {
  const inner = response.response as Record<string, unknown>;
  if (typeof inner.clientDataJSON !== 'string' || inner.clientDataJSON.length > 4096) return undefined;
  try {
    const data = JSON.parse(Buffer.from(inner.clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof data.challenge === 'string' ? data.challenge : undefined;
  } catch {
    return undefined;
  }
}

const notVerified = () => new HttpError(401, { error: 'the passkey could not be verified' });

/** Passkeys (WebAuthn): several per account, named, removable; signing in with one counts as both factors. */
export function createPasskeys(ctx: Pick<AppContext, 'clock' | 'config' | 'transaction'>, accounts: AccountService, repo: SignInRepo, audit: AuditLog) {
  const { clock, config, transaction } = ctx;
  // Registration challenges by session; sign-in challenges by the challenge itself, each usable once.
  const registering = createExpiringMap<RelyingParty & { challenge: string }>(clock, CHALLENGE_MS, 10_000);
  const signingIn = createExpiringMap<RelyingParty>(clock, CHALLENGE_MS, 10_000);

  /**
   * "The relying party ID is the host of the configured origin", or in loopback development the
   * host the browser is on: a name, since browsers refuse an IP address as a relying party ID.
   */
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
    /** Whether the page at this address can use passkeys (GET /api/auth/methods carries no Origin: the Host tells). */
    available(req: Request): boolean {
      if (config.publicOrigin) return true;
      const loopback = plainHttpLoginAllowed(config, req) || (config.tlsNames !== undefined && req.secure);
      return loopback && isIP(req.hostname.replace(/^\[|\]$/g, '')) === 0;
    },

    list: (accountId: number): Passkey[] => repo.passkeys(accountId).map(presentPasskey),

    async registrationOptions(user: SessionUser, session: SessionRef, req: Request, by: Actor) {
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
      audit.write({ ...by, action: 'request', target: user.username, subject: userSubject(user), summary: `${user.username} started adding a passkey` });
      return options;
    },

    async register(user: SessionUser, session: SessionRef, name: string, response: Record<string, unknown>, by: Actor): Promise<Passkey> {
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
        audit.write({ ...by, action: 'passkey.add', target: user.username, subject: userSubject(user), summary: `${user.username} added passkey “${name}”`, detail: { passkey_id: id, name } });
        return presentPasskey(repo.passkey(id, user.id)!);
      })();
    },

    rename(user: SessionUser, id: number, name: string, by: Actor): Passkey {
      return transaction(() => {
        const row = repo.passkey(id, user.id);
        if (!row) throw notFound('passkey not found');
        repo.renamePasskey(id, name);
        audit.write({
          ...by, action: 'passkey.rename', target: user.username, subject: userSubject(user),
          summary: `${user.username} renamed passkey “${row.name}” to “${name}”`, changes: [{ field: 'name', before: row.name, after: name }], detail: { passkey_id: id },
        });
        return presentPasskey(repo.passkey(id, user.id)!);
      })();
    },

    remove(user: SessionUser, id: number, by: Actor): void {
      transaction(() => {
        const row = repo.passkey(id, user.id);
        if (!row) throw notFound('passkey not found');
        repo.deletePasskey(id);
        audit.write({ ...by, action: 'passkey.remove', target: user.username, subject: userSubject(user), summary: `${user.username} removed passkey “${row.name}”`, detail: { passkey_id: id } });
      })();
    },

    /** Options for navigator.credentials.get(): no credential list, so the browser offers the passkeys it holds for this site. */
    async signInOptions(req: Request) {
      const { generateAuthenticationOptions } = await loadWebAuthn();
      const rp = relyingParty(req);
      const options = await generateAuthenticationOptions({ rpID: rp.rpID, userVerification: 'required' });
      signingIn.put(options.challenge, rp);
      return options;
    },

    /** Signs in like a password login (throttled, audited, one session) without a password. */
    async signIn(response: Record<string, unknown>, by: Omit<Actor, 'actor'>) {
      const row = repo.passkeyByCredential(String(response.id));
      const owner = row && accounts.repo.byId(row.account_id);
      // All or nothing, before any verification: the address's window, and the account's when the key names one.
      const slots: ThrottleKey[] = [['login.ip', by.ip ?? ''], ...(owner ? [['login.user', owner.username.toLowerCase()] as ThrottleKey] : [])];
      accounts.takeSlot(...slots);
      const { verifyAuthenticationResponse } = await loadWebAuthn();
      // The challenge must be one this server handed out, unused and unexpired: taken here, so it is used once.
      const challenge = challengeOf(response);
      const rp = challenge === undefined ? undefined : signingIn.take(challenge);
      let result;
      try {
        if (row && rp) {
          result = await verifyAuthenticationResponse({
            response: response as never,
            expectedChallenge: challenge!,
            expectedOrigin: rp.origin,
            expectedRPID: rp.rpID,
            credential: { id: row.credential_id, publicKey: new Uint8Array(row.public_key), counter: row.counter, transports: JSON.parse(row.transports) as never },
            requireUserVerification: true,
          });
        }
      } catch {
        result = undefined;
      }
      const session = result?.verified && row
        ? transaction(() => {
            const current = accounts.repo.byId(row.account_id);
            if (!current || !current.enabled || !repo.passkey(row.id, current.id)) return undefined;
            repo.usePasskey(row.id, result!.authenticationInfo.newCounter, isoSeconds(clock.now()));
            accounts.throttle.release(slots);
            return { account: current, token: accounts.openSession(current, 'passkey', by) };
          })()
        : undefined;
      if (!session) {
        const who = owner?.username;
        audit.write({ ...by, actor: null, action: 'login.failure', target: who ?? null, summary: `passkey sign-in failed${who ? ` for ${who}` : ''}${from(by.ip)}`, detail: { method: 'passkey' } });
        throw notVerified();
      }
      return session;
    },
  };
}

export type Passkeys = ReturnType<typeof createPasskeys>;
