import type { AccountOptions } from '../access/api.js';
import type { UserSecondFactors } from '../contract/signin.js';
import type { Db } from '../db/database.js';

export interface TotpRow {
  account_id: number;
  secret: string;
  created_at: string;
  confirmed_at: string | null;
  last_step: number;
}

export interface PasskeyRow {
  id: number;
  account_id: number;
  credential_id: string;
  public_key: Buffer;
  counter: number;
  transports: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/** The SQL of second factors, passkeys and provider links, prepared once per database. */
export function createSignInRepo(db: Db) {
  const s = {
    totp: db.prepare<[number], TotpRow>('SELECT * FROM totp_factors WHERE account_id = ?'),
    putTotp: db.prepare<[number, string, string], void>(
      `INSERT INTO totp_factors (account_id, secret, created_at) VALUES (?, ?, ?)
       ON CONFLICT (account_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at, confirmed_at = NULL, last_step = 0`,
    ),
    confirmTotp: db.prepare<[string, number, number], void>('UPDATE totp_factors SET confirmed_at = ?, last_step = ? WHERE account_id = ?'),
    // Only a later step than the last one accepted: a code (or an earlier one) is accepted once.
    useStep: db.prepare<[number, number, number], void>('UPDATE totp_factors SET last_step = ? WHERE account_id = ? AND last_step < ? AND confirmed_at IS NOT NULL'),
    deleteTotp: db.prepare<[number], void>('DELETE FROM totp_factors WHERE account_id = ?'),
    addRecovery: db.prepare<[number, string], void>('INSERT INTO recovery_codes (account_id, code_hash) VALUES (?, ?)'),
    useRecovery: db.prepare<[string, number, string], void>('UPDATE recovery_codes SET used_at = ? WHERE account_id = ? AND code_hash = ? AND used_at IS NULL'),
    recoveryLeft: db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM recovery_codes WHERE account_id = ? AND used_at IS NULL'),
    deleteRecovery: db.prepare<[number], void>('DELETE FROM recovery_codes WHERE account_id = ?'),
    passkeys: db.prepare<[number], PasskeyRow>('SELECT * FROM passkeys WHERE account_id = ? ORDER BY id'),
    passkey: db.prepare<[number, number], PasskeyRow>('SELECT * FROM passkeys WHERE id = ? AND account_id = ?'),
    passkeyByCredential: db.prepare<[string], PasskeyRow>('SELECT * FROM passkeys WHERE credential_id = ?'),
    addPasskey: db.prepare<[number, string, Buffer, number, string, string, string], { id: number }>(
      `INSERT INTO passkeys (account_id, credential_id, public_key, counter, transports, name, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    ),
    usePasskey: db.prepare<[number, string, number], void>('UPDATE passkeys SET counter = ?, last_used_at = ? WHERE id = ?'),
    renamePasskey: db.prepare<[string, number], void>('UPDATE passkeys SET name = ? WHERE id = ?'),
    deletePasskey: db.prepare<[number], void>('DELETE FROM passkeys WHERE id = ?'),
    deletePasskeys: db.prepare<[number], void>('DELETE FROM passkeys WHERE account_id = ?'),
    hasFactor: db.prepare<[number, number, number], { yes: number }>(
      `SELECT EXISTS (SELECT 1 FROM totp_factors WHERE account_id = ? AND confirmed_at IS NOT NULL)
           OR EXISTS (SELECT 1 FROM passkeys WHERE account_id = ?)
           OR EXISTS (SELECT 1 FROM oidc_identities WHERE account_id = ?) AS yes`,
    ),
    confirmedTotps: db.prepare<[], number>('SELECT account_id FROM totp_factors WHERE confirmed_at IS NOT NULL').pluck(),
    passkeyCounts: db.prepare<[], { account_id: number; n: number }>('SELECT account_id, count(*) AS n FROM passkeys GROUP BY account_id'),
    linkedAccounts: db.prepare<[], number>('SELECT DISTINCT account_id FROM oidc_identities').pluck(),
    linked: db.prepare<[number], { yes: number }>('SELECT EXISTS (SELECT 1 FROM oidc_identities WHERE account_id = ?) AS yes'),
    identity: db.prepare<[string, string], { account_id: number }>('SELECT account_id FROM oidc_identities WHERE issuer = ? AND subject = ?'),
    link: db.prepare<[number, string, string, string], void>('INSERT INTO oidc_identities (account_id, issuer, subject, created_at) VALUES (?, ?, ?, ?)'),
  };

  return {
    totp: (accountId: number) => s.totp.get(accountId),
    /** A confirmed TOTP factor, or undefined (none, or setup not finished). */
    confirmedTotp(accountId: number): TotpRow | undefined {
      const row = s.totp.get(accountId);
      return row?.confirmed_at ? row : undefined;
    },
    putTotp: (accountId: number, secret: string, at: string) => s.putTotp.run(accountId, secret, at),
    confirmTotp: (accountId: number, at: string, step: number) => s.confirmTotp.run(at, step, accountId),
    /** true when `step` was later than the last accepted one and is now the last. */
    useStep: (accountId: number, step: number) => s.useStep.run(step, accountId, step).changes === 1,
    deleteTotp(accountId: number): void {
      s.deleteTotp.run(accountId);
      s.deleteRecovery.run(accountId);
    },
    replaceRecoveryCodes(accountId: number, hashes: string[]): void {
      s.deleteRecovery.run(accountId);
      for (const hash of hashes) s.addRecovery.run(accountId, hash);
    },
    useRecoveryCode: (accountId: number, hash: string, at: string) => s.useRecovery.run(at, accountId, hash).changes === 1,
    recoveryCodesLeft: (accountId: number) => s.recoveryLeft.get(accountId)!.n,
    passkeys: (accountId: number) => s.passkeys.all(accountId),
    passkey: (id: number, accountId: number) => s.passkey.get(id, accountId),
    passkeyByCredential: (credentialId: string) => s.passkeyByCredential.get(credentialId),
    addPasskey: (p: { account_id: number; credential_id: string; public_key: Buffer; counter: number; transports: string[]; name: string; created_at: string }) =>
      s.addPasskey.get(p.account_id, p.credential_id, p.public_key, p.counter, JSON.stringify(p.transports), p.name, p.created_at)!.id,
    usePasskey: (id: number, counter: number, at: string) => s.usePasskey.run(counter, at, id),
    renamePasskey: (id: number, name: string) => s.renamePasskey.run(name, id),
    deletePasskey: (id: number) => s.deletePasskey.run(id),
    /** Removes the account's TOTP (with its recovery codes) and passkeys; says what there was. */
    clearSecondFactors(accountId: number): { totp: boolean; passkeys: number } {
      const had = { totp: s.totp.get(accountId) !== undefined, passkeys: s.passkeys.all(accountId).length };
      s.deleteTotp.run(accountId);
      s.deleteRecovery.run(accountId);
      s.deletePasskeys.run(accountId);
      return had;
    },
    /** A confirmed TOTP, a passkey, or a provider's sign-in (whose own factors apply): what FLEET_REQUIRE_2FA asks for. */
    hasSecondFactor: (accountId: number) => s.hasFactor.get(accountId, accountId, accountId)!.yes === 1,
    /** The second factors of each of these accounts (the Users page), three queries however many there are. */
    factorsOf(accountIds: readonly number[]): UserSecondFactors[] {
      const totp = new Set(s.confirmedTotps.all());
      const passkeys = new Map(s.passkeyCounts.all().map((r) => [r.account_id, r.n]));
      const oidc = new Set(s.linkedAccounts.all());
      return accountIds.map((id) => ({ user_id: id, totp: totp.has(id), passkeys: passkeys.get(id) ?? 0, oidc: oidc.has(id) }));
    },
    /** Whether the account signs in through the single sign-on provider. */
    linkedToProvider: (accountId: number) => s.linked.get(accountId)!.yes === 1,
    accountOfIdentity: (issuer: string, subject: string) => s.identity.get(issuer, subject)?.account_id,
    link: (accountId: number, issuer: string, subject: string, at: string) => s.link.run(accountId, issuer, subject, at),
  };
}

export type SignInRepo = ReturnType<typeof createSignInRepo>;

/** "TOTP and 2 passkeys", or undefined when there was nothing. */
export function factorWords(had: { totp: boolean; passkeys: number }): string | undefined {
  return [had.totp ? 'TOTP' : '', had.passkeys ? `${had.passkeys} passkey${had.passkeys === 1 ? '' : 's'}` : ''].filter(Boolean).join(' and ') || undefined;
}

/**
 * What the account service needs of sign-in (handed in by the composition roots, so access imports
 * no feature): the second steps a password login waits for (TOTP first: clients from before passkeys
 * read only that one), the passkeys a password change lists, and the clearing the recovery command does.
 */
export function accountHooks(repo: SignInRepo): AccountOptions {
  return {
    secondFactorsOf: (id) => [...(repo.confirmedTotp(id) ? (['totp'] as const) : []), ...(repo.passkeys(id).length > 0 ? (['passkey'] as const) : [])],
    clearSecondFactors: (id) => factorWords(repo.clearSecondFactors(id)),
  };
}
