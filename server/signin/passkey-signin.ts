import type { Request } from 'express';
import { ANONYMOUS, createExpiringMap, from, loginSubject, type AccountService, type Sealer, type ThrottleKey } from '../access/api.js';
import type { AuditLog } from '../audit.js';
import { currentContext } from '../http/request-context.js';
import type { AppContext } from '../context.js';
import { badRequest, unauthorized } from '../errors.js';
import { sha256 } from '../http/secrets.js';
import { isoSeconds } from '../time.js';
import { CHALLENGE_MS, challengeOf, loadWebAuthn, notVerified, type RelyingParty } from './passkeys.js';
import type { PasskeyRow, SignInRepo } from './repo.js';

/** The cookies that carry a challenge: a sign-in with a passkey alone, and the passkey step after a password. */
export const PASSKEY_COOKIE = 'passkey';
export const PASSKEY_STEP_COOKIE = 'passkey_step';

/** A challenge handed out, as its sealed cookie carries it; `pending` binds a second step to the password sign-in it finishes. */
interface Challenge extends RelyingParty {
  challenge: string;
  pending?: string;
}

const expired = () => unauthorized('the sign-in has expired; enter your password again');

/**
 * Signing in with a passkey: alone (it counts as both factors), or as the second step of a password
 * sign-in. The challenge travels in a signed cookie of the browser that asked for it, so no number
 * of anonymous requests can push a person's challenge out of a store (issue 34). Both are throttled
 * like a password login, in the same windows.
 */
export function createPasskeySignIn(
  ctx: Pick<AppContext, 'clock' | 'transaction'>,
  accounts: AccountService,
  repo: SignInRepo,
  audit: AuditLog,
  sealer: Sealer,
  relyingParty: (req: Request) => RelyingParty,
) {
  const { clock, transaction } = ctx;
  // Challenges that signed someone in, so an answer works once. Only a verified passkey adds one: no anonymous request can.
  const used = createExpiringMap<true>(clock, CHALLENGE_MS, 100_000);

  async function options(req: Request, kind: string, waitingFor?: { keys: PasskeyRow[]; pending: string }) {
    const { generateAuthenticationOptions } = await loadWebAuthn();
    const rp = relyingParty(req);
    const allowCredentials = waitingFor?.keys.map((k) => ({ id: k.credential_id, transports: JSON.parse(k.transports) as never }));
    const options = await generateAuthenticationOptions({ rpID: rp.rpID, userVerification: 'required', ...(allowCredentials ? { allowCredentials } : {}) });
    const challenge: Challenge = { ...rp, challenge: options.challenge, ...(waitingFor ? { pending: waitingFor.pending } : {}) };
    return { options, cookie: sealer.seal(kind, challenge, CHALLENGE_MS) };
  }

  /** The signature counter after a verified answer to `challenge` from `key`, or undefined. */
  async function verify(challenge: Challenge, response: Record<string, unknown>, key: PasskeyRow): Promise<number | undefined> {
    const { verifyAuthenticationResponse } = await loadWebAuthn();
    try {
      const result = await verifyAuthenticationResponse({
        response: response as never,
        expectedChallenge: challenge.challenge,
        expectedOrigin: challenge.origin,
        expectedRPID: challenge.rpID,
        credential: { id: key.credential_id, publicKey: new Uint8Array(key.public_key), counter: key.counter, transports: JSON.parse(key.transports) as never },
        requireUserVerification: true,
      });
      return result.verified ? result.authenticationInfo.newCounter : undefined;
    } catch {
      return undefined;
    }
  }

  /** The challenge this browser was given, when the answer signed that one and it has not signed anyone in yet. */
  function challengeAnswered(kind: string, cookie: string | undefined, response: Record<string, unknown>): Challenge | undefined {
    const given = sealer.open<Challenge>(kind, cookie);
    return given && challengeOf(response) === given.challenge && !used.get(given.challenge) ? given : undefined;
  }

  function failed(who: string | undefined, method: string): never {
    audit.write({ actor: ANONYMOUS, action: 'login.failure', subject: loginSubject(who), summary: `passkey sign-in failed${who ? ` for ${who}` : ''}${from(currentContext().ip)}`, detail: { method } });
    throw notVerified();
  }

  return {
    /** Options for navigator.credentials.get(): no credential list, so the browser offers the passkeys it holds for this site. */
    signInOptions: (req: Request) => options(req, PASSKEY_COOKIE),

    /** Signs in like a password login (throttled, audited, one session) without a password. */
    async signIn(cookie: string | undefined, response: Record<string, unknown>) {
      const key = repo.passkeyByCredential(String(response.id));
      const owner = key && accounts.repo.byId(key.account_id);
      const challenge = challengeAnswered(PASSKEY_COOKIE, cookie, response);
      // All or nothing, before any verification: the address's window, and the account's when the
      // answer is to this browser's challenge. Without one nothing about the account was tried, so
      // an expired or missing challenge never counts against a username.
      const slots: ThrottleKey[] = [['login.ip', currentContext().ip ?? ''], ...(challenge && owner ? [['login.user', owner.username.toLowerCase()] as ThrottleKey] : [])];
      accounts.takeSlot(...slots);
      const counter = challenge && key ? await verify(challenge, response, key) : undefined;
      const session = counter === undefined
        ? undefined
        : transaction(() => {
            const current = accounts.repo.byId(key!.account_id);
            // Checked again after the await: the key removed, the account disabled, or the answer used by a parallel request.
            if (!current || !current.enabled || !repo.passkey(key!.id, current.id) || used.get(challenge!.challenge)) return undefined;
            used.put(challenge!.challenge, true);
            repo.usePasskey(key!.id, counter, isoSeconds(clock.now()));
            accounts.throttle.release(slots);
            return { account: current, token: accounts.openSession(current, 'passkey') };
          })();
      return session ?? failed(owner?.username, 'passkey');
    },

    /** The passkey step after a right password: options that name the account's passkeys, bound to its pending sign-in. */
    async stepOptions(pendingToken: string | undefined, req: Request) {
      const waiting = pendingToken ? accounts.pending.peek(pendingToken) : undefined;
      if (!pendingToken || !waiting) throw expired();
      const keys = repo.passkeys(waiting.accountId);
      if (keys.length === 0) throw badRequest('this account has no passkey; use its other second factor');
      return options(req, PASSKEY_STEP_COOKIE, { keys, pending: sha256(pendingToken) });
    },

    /** The second step of a password sign-in with one of the account's passkeys: counted like a wrong code when it fails. */
    async stepSignIn(pendingToken: string | undefined, cookie: string | undefined, response: Record<string, unknown>) {
      const waiting = pendingToken ? accounts.pending.peek(pendingToken) : undefined;
      if (!pendingToken || !waiting) throw expired();
      const username = accounts.repo.byId(waiting.accountId)?.username;
      const given = challengeAnswered(PASSKEY_STEP_COOKIE, cookie, response);
      const challenge = given?.pending === sha256(pendingToken) ? given : undefined;
      const slots: ThrottleKey[] = [['login.ip', currentContext().ip ?? ''], ...(challenge && username ? [['login.user', username.toLowerCase()] as ThrottleKey] : [])];
      accounts.takeSlot(...slots);
      const key = repo.passkeyByCredential(String(response.id));
      // Only a passkey of the account whose password was right finishes its sign-in.
      const counter = challenge && key?.account_id === waiting.accountId ? await verify(challenge, response, key) : undefined;
      const session = counter === undefined
        ? undefined
        : transaction(() => {
            const current = accounts.repo.byId(waiting.accountId);
            // Disabled, or the password changed, while the passkey was asked: this wait is over.
            if (!current || !current.enabled || current.password_hash !== waiting.passwordHash) {
              accounts.pending.finish(pendingToken);
              return undefined;
            }
            if (!repo.passkey(key!.id, current.id) || used.get(challenge!.challenge)) return undefined;
            used.put(challenge!.challenge, true);
            repo.usePasskey(key!.id, counter, isoSeconds(clock.now()));
            accounts.throttle.release(slots);
            accounts.pending.finish(pendingToken);
            return { account: current, token: accounts.openSession(current, 'password_passkey') };
          })();
      return session ?? failed(username, 'password_passkey');
    },
  };
}

export type PasskeySignIn = ReturnType<typeof createPasskeySignIn>;
