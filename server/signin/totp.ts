import { randomInt } from 'node:crypto';
import { ANONYMOUS, from, invalidCredentials, loginSubject, userSubject, verifyPassword, type AccountService, type ThrottleKey } from '../access/api.js';
import { nameOf, type AuditLog } from '../audit.js';
import { currentContext } from '../http/request-context.js';
import type { AppContext } from '../context.js';
import type { RecoveryCodes, TotpSetup, TotpStatus } from '../contract/signin.js';
import { conflict, HttpError, notFound, unauthorized, validationFailed } from '../errors.js';
import type { SessionUser } from '../http/credentials.js';
import { sha256 } from '../http/secrets.js';
import { isoSeconds } from '../time.js';
import { factorWords, type SignInRepo } from './repo.js';

/** RFC 6238 as PRODUCT.md fixes it: SHA-1, 6 digits, 30-second steps, one step either side. */
const TOTP_OPTIONS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
const RECOVERY_CODES = 10;
/** Crockford's base32 without look-alikes: 10 characters are 50 random bits. */
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

// Loaded on first use only: a server whose users never turn TOTP on never reads these libraries.
let otpauth: Promise<typeof import('otpauth')> | undefined;
const loadOtpauth = () => (otpauth ??= import('otpauth'));

async function qrCodeDataUrl(text: string): Promise<string> {
  // qrcode is CommonJS: bundled (dist/), its exports arrive as the default export only.
  const loaded = (await import('qrcode')) as typeof import('qrcode') & { default?: typeof import('qrcode') };
  const qrcode = loaded.default ?? loaded;
  const svg = await qrcode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

/** `xxxxx-xxxxx`; typed back with any case, spaces or dashes. */
function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < 10; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}
const recoveryHash = (code: string) => sha256(code.toLowerCase().replace(/[\s-]+/g, ''));

const wrongCode = () => validationFailed([{ field: 'code', message: 'is not the current code; check the time on the phone and try the next one' }]);

/** TOTP second factors: setup, confirmation with recovery codes, removal, and the second step of a password sign-in. */
export function createTotp(ctx: Pick<AppContext, 'clock' | 'transaction'>, accounts: AccountService, repo: SignInRepo, audit: AuditLog) {
  const { clock, transaction } = ctx;

  /** The 30-second step a code belongs to (now, or one step either side), or undefined. */
  async function stepOf(secret: string, code: string): Promise<number | undefined> {
    const { TOTP, Secret } = await loadOtpauth();
    const timestamp = clock.now();
    const delta = TOTP.validate({ token: code, secret: Secret.fromBase32(secret), timestamp, window: 1, ...TOTP_OPTIONS });
    return delta === null ? undefined : TOTP.counter({ period: TOTP_OPTIONS.period, timestamp }) + delta;
  }

  return {
    status: (accountId: number): TotpStatus => ({ enabled: repo.confirmedTotp(accountId) !== undefined, recovery_codes_left: repo.recoveryCodesLeft(accountId) }),

    /** A new secret waiting for its first code; a factor already on must be removed first. */
    async setup(user: SessionUser): Promise<TotpSetup> {
      const { TOTP, Secret } = await loadOtpauth();
      const secret = new Secret({ size: 20 }).base32;
      const otpauth_url = new TOTP({ issuer: 'homefleet', label: user.username, secret, ...TOTP_OPTIONS }).toString();
      const qr_code = await qrCodeDataUrl(otpauth_url);
      transaction(() => {
        // Checked after the awaits, in the transaction that writes: a confirmation meanwhile is not overwritten.
        if (repo.confirmedTotp(user.id)) throw conflict('two-step sign-in is already on; remove it first to set it up again');
        repo.putTotp(user.id, secret, isoSeconds(clock.now()));
        audit.write({ action: 'request', subject: userSubject(user), summary: `${user.username} started setting up two-step sign-in (TOTP)` });
      })();
      return { secret, otpauth_url, qr_code };
    },

    async confirm(user: SessionUser, code: string): Promise<RecoveryCodes> {
      const waiting = repo.totp(user.id);
      if (!waiting) throw conflict('start the setup first');
      const step = await stepOf(waiting.secret, code);
      const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
      transaction(() => {
        const row = repo.totp(user.id);
        if (!row || row.secret !== waiting.secret) throw conflict('the setup was started again; scan the new code');
        if (row.confirmed_at) throw conflict('two-step sign-in is already on');
        if (step === undefined) throw wrongCode();
        repo.confirmTotp(user.id, isoSeconds(clock.now()), step);
        repo.replaceRecoveryCodes(user.id, codes.map(recoveryHash));
        audit.write({ action: 'totp.enable', subject: userSubject(user), summary: `${user.username} turned on two-step sign-in (TOTP)` });
      })();
      return { recovery_codes: codes };
    },

    /** Whether `code` is the account's current TOTP code, used up when it is (each code is accepted once). */
    async useCode(accountId: number, code: string): Promise<boolean> {
      const factor = repo.confirmedTotp(accountId);
      const step = factor ? await stepOf(factor.secret, code) : undefined;
      return step !== undefined && transaction(() => repo.useStep(accountId, step))();
    },

    /** Needs the account's password (throttled like a password change). */
    async remove(user: SessionUser, password: string): Promise<void> {
      const slot: ThrottleKey = ['password.account', String(user.id)];
      accounts.takeSlot(slot);
      const row = accounts.repo.byId(user.id);
      if (!row || !(await verifyPassword(password, row.password_hash))) throw new HttpError(401, { error: 'wrong password' });
      accounts.throttle.release([slot]);
      transaction(() => {
        if (!repo.totp(user.id)) throw notFound('two-step sign-in is not on');
        repo.deleteTotp(user.id);
        audit.write({ action: 'totp.disable', subject: userSubject(user), summary: `${user.username} turned off two-step sign-in (TOTP)` });
      })();
    },

    /**
     * The second step of a password sign-in. A wrong code counts against the same per-username and
     * per-address windows as a wrong password: the slots are taken before the code is checked and
     * given back only when it was right. A code's step must be later than the last one accepted.
     */
    async signIn(pendingToken: string | undefined, answer: { code?: string; recovery_code?: string }) {
      const waiting = pendingToken ? accounts.pending.peek(pendingToken) : undefined;
      if (!pendingToken || !waiting) throw unauthorized('the sign-in has expired; enter your password again');
      const row = accounts.repo.byId(waiting.accountId);
      const username = row?.username ?? '';
      const slots: ThrottleKey[] = [['login.ip', currentContext().ip ?? ''], ['login.user', username.toLowerCase()]];
      accounts.takeSlot(...slots);
      const factor = repo.confirmedTotp(waiting.accountId);
      const step = answer.code !== undefined && factor ? await stepOf(factor.secret, answer.code) : undefined;
      const method = answer.code !== undefined ? 'totp' : 'recovery_code';
      const token = transaction(() => {
        const current = accounts.repo.byId(waiting.accountId);
        // Disabled, or the password changed, while the code was typed: this wait is over.
        if (!current || !current.enabled || current.password_hash !== waiting.passwordHash) {
          accounts.pending.finish(pendingToken);
          return undefined;
        }
        const ok = method === 'totp'
          ? step !== undefined && repo.useStep(current.id, step)
          : repo.useRecoveryCode(current.id, recoveryHash(answer.recovery_code!), isoSeconds(clock.now()));
        if (!ok) return undefined;
        accounts.throttle.release(slots);
        accounts.pending.finish(pendingToken);
        return { account: current, token: accounts.openSession(current, method) };
      })();
      if (!token) {
        const tried = username || 'an expired sign-in';
        audit.write({ actor: ANONYMOUS, action: 'login.failure', subject: loginSubject(username || undefined), summary: `second factor failed for ${tried}${from(currentContext().ip)}`, detail: { method } });
        throw method === 'totp' ? new HttpError(401, { error: 'invalid code' }) : invalidCredentials();
      }
      return token;
    },

    /** An administrator clears another account's second factors: TOTP, recovery codes and passkeys. */
    reset(accountId: number): void {
      transaction(() => {
        const row = accounts.repo.byId(accountId);
        if (!row) throw notFound('user not found');
        const had = repo.clearSecondFactors(accountId);
        accounts.sessions.revokeAll(accountId, 'second factor cleared by an administrator');
        const what = factorWords(had) ?? 'none was set up';
        audit.write({ action: 'user.reset_second_factor', subject: userSubject(row), summary: `${nameOf()} cleared the second factors of ${row.username} (${what})`, detail: { id: accountId, ...had } });
      })();
    },
  };
}

export type Totp = ReturnType<typeof createTotp>;
