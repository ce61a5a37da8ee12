import { nameOf, type AuditChange, type AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Account, SecondFactorKind } from '../contract/access.js';
import { userUpdateWords } from '../contract/audit.js';
import type { Db } from '../db/database.js';
import { conflict, HttpError, notFound, tooManyRequests, unauthorized } from '../errors.js';
import type { Actor, CredentialResolvers } from '../http/credentials.js';
import { currentContext } from '../http/request-context.js';
import { isoMillis, isoSeconds } from '../time.js';
import type { Role } from '../contract/access.js';
import { burnPasswordCheck, hashPassword as hashAtCost, temporaryPassword, verifyPassword, type PasswordCost } from './passwords.js';
import { createPendingLogins } from './pending.js';
import { createAccountRepo, type AccountRow } from './repo.js';
import { createSessions, type Sessions } from './sessions.js';
import { createThrottle, type Throttle, type ThrottleKey } from './throttle.js';

export type { Account };

export function presentAccount(row: AccountRow): Account {
  return {
    id: row.id,
    username: row.username,
    display_name: row.display_name,
    role: row.role,
    enabled: row.enabled === 1,
    must_change_password: row.must_change_password === 1,
    created_at: row.created_at,
    last_login_at: row.last_login_at,
  };
}

/**
 * Whether a database holds at least one account, for a look into a file the app has not opened
 * (the desktop app's first start): a database from before the access layer's migration has none.
 */
export function hasAnyAccount(db: Db): boolean {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'accounts'").get();
  return table !== undefined && db.prepare('SELECT 1 FROM accounts LIMIT 1').get() !== undefined;
}

const METHOD_WORDS: Record<SignInMethod, string> = {
  password: 'a password',
  totp: 'a password and a one-time code',
  recovery_code: 'a password and a recovery code',
  passkey: 'a passkey',
  password_passkey: 'a password and a passkey',
  oidc: 'single sign-on',
};

export const userSubject = (row: Pick<AccountRow, 'id' | 'username'>) => ({ type: 'user', id: String(row.id), name: row.username });
/** A sign-in attempt's subject: the name tried, whether or not an account has it. */
export const loginSubject = (tried: string | undefined) => ({ type: 'login', id: tried ?? '', name: tried ?? null });
/** The person a sign-in opens a session for: the actor of its `login.success` entry. */
export const userActor = (row: Pick<AccountRow, 'id' | 'username'>): Actor => ({ type: 'user', id: row.id, name: row.username });
export const ANONYMOUS: Actor = { type: 'anonymous' };
export const from = (ip: string | null | undefined) => (ip ? ` from ${ip}` : '');

export const invalidCredentials = () => new HttpError(401, { error: 'invalid credentials' });
export const lastAdministrator = () => conflict('last administrator');

export interface NewAccount {
  username: string;
  display_name: string;
  role: Role;
  password: string;
  must_change_password?: boolean;
}

/** How a sign-in proved who it was, for its audit entry: a password alone, or a password and a second factor, a passkey, a provider. */
export type SignInMethod = 'password' | 'totp' | 'recovery_code' | 'passkey' | 'password_passkey' | 'oidc';

/** A password login: a session, or (the account has a second factor) the steps that may follow and the token of the wait for them. */
export type LoginResult = { account: Account; token: string } | { secondFactors: SecondFactorKind[]; pending: string };

export interface AccountOptions {
  /** The second steps a password login must be followed by, none when empty (server/signin hands it in through the composition root). */
  secondFactorsOf?: (accountId: number) => SecondFactorKind[];
  /** Removes the account's second factors (the recovery command); returns what was removed in words, if any. */
  clearSecondFactors?: (accountId: number) => string | undefined;
  /** A lower scrypt cost for new password hashes: injected by in-process tests that do not test hashing, never by the product. */
  passwordCost?: PasswordCost | undefined;
}

/** Accounts, logins and password changes: every rule of PRODUCT.md's access section that is not HTTP. */
export function createAccountService(ctx: Pick<AppContext, 'db' | 'clock' | 'bus' | 'transaction'>, audit: AuditLog, options: AccountOptions = {}) {
  const { db, clock, bus, transaction } = ctx;
  const repo = createAccountRepo(db);
  const throttle: Throttle = createThrottle(db, clock);
  const sessions: Sessions = createSessions(repo, clock, (change) => bus.publish('session.revoked', change));
  const pending = createPendingLogins(clock);
  const hashPassword = (password: string) => hashAtCost(password, options.passwordCost);

  /**
   * The end of every successful sign-in, whatever proved it: one session for the account (its
   * previous one ends), the last-login time, the `login.success` entry. Call inside a transaction.
   */
  function openSession(row: AccountRow, method: SignInMethod): string {
    const token = sessions.issue(row.id);
    repo.setLastLogin(row.id, isoSeconds(clock.now()));
    const how = method === 'password' ? '' : ` with ${METHOD_WORDS[method]}`;
    audit.write({ actor: userActor(row), action: 'login.success', subject: userSubject(row), summary: `${row.username} signed in${how}${from(currentContext().ip)}`, ...(method === 'password' ? {} : { detail: { method } }) });
    return token;
  }

  const getRow = (id: number) => {
    const row = repo.byId(id);
    if (!row) throw notFound('user not found');
    return row;
  };

  /** Takes a slot in every window before anything is hashed; 429 when one is full. */
  function takeSlot(...keys: ThrottleKey[]): void {
    const wait = throttle.take(keys);
    if (wait > 0) throw tooManyRequests(wait);
  }

  return {
    repo,
    throttle,
    sessions,
    pending,
    openSession,
    takeSlot,
    hasAccounts: () => repo.count() > 0,

    /** The session resolver of the authentication step: the live session of a cookie's token and its account. */
    resolveSession: ((token, touch) => {
      const active = sessions.resolve(token, { touch });
      if (!active) return undefined;
      const { session, account } = active;
      return { session, user: { id: account.id, username: account.username, role: account.role }, mustChangePassword: account.must_change_password === 1 };
    }) satisfies CredentialResolvers['session'],
    list: () => repo.list().map(presentAccount),

    /** Creates an account with a chosen password (the first administrator, tests) or a temporary one. */
    async create(input: NewAccount, action: 'user.create' | 'setup' = 'user.create'): Promise<Account> {
      const hash = await hashPassword(input.password);
      return transaction(() => {
        // Setup is open only while no account exists; checked again here because hashing awaited.
        if (action === 'setup' && repo.count() > 0) throw notFound('setup is closed');
        if (repo.byUsername(input.username)) throw conflict('username taken');
        const id = repo.insert({
          username: input.username,
          display_name: input.display_name,
          role: input.role,
          must_change_password: input.must_change_password ?? false,
          password_hash: hash,
          created_at: isoSeconds(clock.now()),
        });
        const summary = action === 'setup'
          ? `${input.username} was created as the first administrator (setup${from(currentContext().ip)})`
          : `${nameOf()} created user ${input.username} (${input.role})`;
        audit.write({ action, subject: userSubject({ id, username: input.username }), summary, detail: { id, role: input.role } });
        return presentAccount(getRow(id));
      })();
    },

    async createWithTemporaryPassword(input: Omit<NewAccount, 'password'>) {
      const password = temporaryPassword();
      const user = await this.create({ ...input, password, must_change_password: true });
      return { user, temporary_password: password };
    },

    update(id: number, patch: { display_name?: string; role?: Role; enabled?: boolean }): Account {
      return transaction(() => {
        const row = getRow(id);
        const next = {
          display_name: patch.display_name ?? row.display_name,
          role: patch.role ?? row.role,
          enabled: patch.enabled ?? row.enabled === 1,
        };
        const wasActiveAdmin = row.role === 'administrator' && row.enabled === 1;
        const staysActiveAdmin = next.role === 'administrator' && next.enabled;
        if (wasActiveAdmin && !staysActiveAdmin && repo.enabledAdmins() <= 1) throw lastAdministrator();
        repo.update(id, next);
        const changes: Record<string, { from: unknown; to: unknown }> = {};
        if (next.display_name !== row.display_name) changes.display_name = { from: row.display_name, to: next.display_name };
        if (next.role !== row.role) changes.role = { from: row.role, to: next.role };
        if (next.enabled !== (row.enabled === 1)) changes.enabled = { from: row.enabled === 1, to: next.enabled };
        // A role change or a disable ends the account's sessions: the old cookie must not keep the old rights.
        if (changes.role || !next.enabled) sessions.revokeAll(id, !next.enabled ? 'account disabled' : 'role changed');
        const fields: AuditChange[] = Object.entries(changes).map(([field, c]) => ({ field, before: c.from, after: c.to }));
        audit.write({ action: 'user.update', subject: userSubject(row), summary: userUpdateWords(nameOf(), row.username, changes), changes: fields, detail: { id, changes } });
        return presentAccount(getRow(id));
      })();
    },

    async resetPassword(id: number): Promise<string> {
      const row = getRow(id);
      const password = temporaryPassword();
      const hash = await hashPassword(password);
      transaction(() => {
        repo.setPassword(row.id, hash, true, isoSeconds(clock.now()));
        sessions.revokeAll(row.id, 'password reset by an administrator');
        audit.write({ action: 'user.reset_password', subject: userSubject(row), summary: `${nameOf()} reset the password of ${row.username}`, detail: { id } });
      })();
      return password;
    },

    revokeSessions(id: number): void {
      const row = getRow(id);
      transaction(() => {
        sessions.revokeAll(row.id, 'sessions revoked by an administrator');
        audit.write({ action: 'user.revoke_sessions', subject: userSubject(row), summary: `${nameOf()} signed ${row.username} out everywhere`, detail: { id } });
      })();
    },

    /**
     * Same 401 for an unknown user, a wrong password and a disabled account; the attempt's slots are
     * taken before any hashing. An account with a second factor gets no session yet: the right
     * password gives its slots back and opens a 5-minute wait for the code (server/signin).
     */
    async login(username: string, password: string): Promise<LoginResult> {
      const { ip } = currentContext();
      const userKey = username.toLowerCase();
      const slots: ThrottleKey[] = [['login.ip', ip ?? ''], ['login.user', userKey]];
      takeSlot(...slots);
      const row = repo.byUsername(username);
      let ok = false;
      if (row) ok = await verifyPassword(password, row.password_hash);
      else await burnPasswordCheck(password);
      const current = row && repo.byId(row.id);
      if (!ok || !current || !current.enabled || current.password_hash !== row!.password_hash) {
        // The slots stay taken: they are this failure's count.
        const tried = username.slice(0, 64);
        audit.write({ actor: ANONYMOUS, action: 'login.failure', subject: loginSubject(tried), summary: `login failed for ${tried}${from(ip)}` });
        throw invalidCredentials();
      }
      return transaction((): LoginResult => {
        throttle.release(slots);
        // "A password sign-in of an account with passkeys needs the passkey (or TOTP) as its second step" (issue 34).
        const factors = options.secondFactorsOf?.(current.id) ?? [];
        if (factors.length > 0) return { secondFactors: factors, pending: pending.start({ accountId: current.id, passwordHash: current.password_hash }) };
        const token = openSession(current, 'password');
        return { account: presentAccount(getRow(current.id)), token };
      })();
    },

    /**
     * Needs the current password (5 failures per account and window); ends every session and issues
     * a new one. Hashing awaits, so the account is read again in the transaction that writes: when
     * an administrator revoked the session, reset the password or disabled the account meanwhile,
     * the change is refused (401 when the acting session is gone, 409 when only the password changed).
     */
    async changePassword(accountId: number, sessionId: number, current: string, next: string): Promise<string> {
      const slot: ThrottleKey = ['password.account', String(accountId)];
      takeSlot(slot);
      const row = getRow(accountId);
      if (!(await verifyPassword(current, row.password_hash))) throw new HttpError(401, { error: 'wrong current password' });
      // Verified: not a guess, so the slot goes back whatever happens next.
      throttle.release([slot]);
      const hash = await hashPassword(next);
      return transaction(() => {
        const now = repo.byId(accountId);
        if (!now || !now.enabled || !repo.sessionById(sessionId)) throw unauthorized('authentication required');
        if (now.password_hash !== row.password_hash) throw conflict('password was changed meanwhile; sign in again');
        repo.setPassword(accountId, hash, false, isoSeconds(clock.now()));
        const token = sessions.issue(accountId, 'password changed');
        audit.write({ actor: userActor(row), action: 'password.change', subject: userSubject(row), summary: `${row.username} changed their own password` });
        return token;
      })();
    },

    /** The local recovery command: an enabled administrator only. A one-line reason when refused, else what it cleared. */
    async recover(username: string, password: string): Promise<string | { cleared: string | undefined }> {
      const row = repo.byUsername(username);
      if (!row) return `no account named ${JSON.stringify(username)}`;
      if (row.role !== 'administrator') return `${row.username} is not an administrator`;
      if (!row.enabled) return `${row.username} is disabled`;
      const hash = await hashPassword(password);
      return transaction(() => {
        repo.setPassword(row.id, hash, false, isoSeconds(clock.now()));
        sessions.revokeAll(row.id, 'password recovered');
        // Whoever runs the command holds the database file already; a lost phone must not lock the last administrator out.
        const cleared = options.clearSecondFactors?.(row.id);
        audit.write({
          action: 'recovery',
          subject: userSubject(row),
          summary: `the password of ${row.username} was reset with the recovery command${cleared ? `; their second factors (${cleared}) were removed` : ''}`,
          detail: { id: row.id, via: 'recovery command', ...(cleared ? { second_factors_removed: cleared } : {}) },
        });
        return { cleared };
      })();
    },

    /** Ends the session and records the sign-out in one transaction. */
    logout(sessionId: number, user: { id: number; username: string }): void {
      transaction(() => {
        sessions.revoke(sessionId);
        audit.write({ action: 'logout', subject: userSubject(user), summary: `${user.username} signed out` });
      })();
    },

    expiries(session: { created_at: number; last_seen: number }, absoluteMs: number, idleMs: number) {
      return { expires_at: isoMillis(session.created_at + absoluteMs), idle_expires_at: isoMillis(session.last_seen + idleMs) };
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
