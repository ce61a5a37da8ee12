import { lowerRole, roleHas, roleRank, type Role } from '../contract/access.js';
import { newToken, secretsEqual, sha256 } from '../http/secrets.js';
import { nameOf, type AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import { unlessBusy } from '../db/busy.js';
import { conflict, forbidden, notFound, validationFailed } from '../errors.js';
import type { Principal, SessionUser, TokenRef } from '../http/credentials.js';
import type { Clock } from '../time.js';
import { isoMillis, isoSeconds } from '../time.js';
import { createTokenRepo, type ApiTokenRow, type ApiTokenWithOwner } from './repo.js';
import type { ApiToken, CreatedApiToken } from '../contract/tokens.js';
import type { TokenCreate } from '../contract/inputs/tokens.js';

export const TOKEN_PREFIX = 'hfp_';
/** `hfp_` and 32 random bytes in base64url: anything else is not one of ours and is refused without a lookup. */
export const TOKEN_PATTERN = /^hfp_[A-Za-z0-9_-]{43}$/;
/** Tokens one account may hold, expired ones included until revoked: each can hold event streams and be leaked. */
export const MAX_TOKENS_PER_ACCOUNT = 50;
/** Last use is written at most this often, so a busy script does not write on every request. */
export const LAST_USE_MS = 60 * 1000;

export function presentToken(row: ApiTokenWithOwner): ApiToken {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    user: { id: row.account_id, username: row.username },
    created_at: row.created_at,
    expires_at: row.expires_at === null ? null : isoMillis(row.expires_at),
    last_used_at: row.last_used_at === null ? null : isoMillis(row.last_used_at),
    last_used_ip: row.last_used_ip,
  };
}

declare module '../bus.js' {
  interface InternalEvents {
    /** A personal API token was revoked: its event streams end at once (server/events). */
    'token.revoked': { tokenId: number; reason: string };
  }
}

/** Who a token request acts as: the owner, at the lower of the token's and the owner's role. */
export type TokenPrincipal = Principal & { token: TokenRef };

const tokenSubject = (row: { id: number; name: string }) => ({ type: 'api_token', id: String(row.id), name: row.name });

/**
 * The accounts tokens belong to, read through access, which owns them (server/services.ts hands in
 * its repo): whether the owner may still use a token, and the username a token is listed under.
 */
export interface TokenOwners {
  byId(id: number): { username: string; role: Role; enabled: number; must_change_password: number } | undefined;
  list(): readonly { id: number; username: string }[];
}

export function createTokenService(ctx: Pick<AppContext, 'db' | 'clock' | 'bus' | 'transaction'>, audit: AuditLog, owners: TokenOwners) {
  const { db, clock, bus, transaction } = ctx;
  const repo = createTokenRepo(db);

  /** A token of an account that is gone is nobody's (as the join it replaced left it out). */
  const withOwner = (row: ApiTokenRow | undefined): ApiTokenWithOwner | undefined => {
    const owner = row && owners.byId(row.account_id);
    return owner && { ...row!, username: owner.username };
  };
  const allWithOwners = (): ApiTokenWithOwner[] => {
    const names = new Map(owners.list().map((a) => [a.id, a.username]));
    return repo.all().flatMap((row) => {
      const username = names.get(row.account_id);
      return username === undefined ? [] : [{ ...row, username }];
    });
  };

  const visible = (id: number, by: SessionUser) => {
    const row = withOwner(repo.byId(id));
    // Someone else's token is "not found" to a non-administrator: ids of others' tokens are not theirs to learn.
    if (!row || (row.account_id !== by.id && !roleHas(by.role, 'users.manage'))) throw notFound('token not found');
    return row;
  };

  return {
    repo,
    prefix: TOKEN_PREFIX,

    list(by: SessionUser, all: boolean): ApiToken[] {
      if (all && !roleHas(by.role, 'users.manage')) throw forbidden('forbidden');
      return (all ? allWithOwners() : repo.ofAccount(by.id).map((row) => ({ ...row, username: by.username }))).map(presentToken);
    },

    create(input: TokenCreate, by: SessionUser): CreatedApiToken {
      if (roleRank(input.role) > roleRank(by.role)) throw validationFailed([{ field: 'role', message: `cannot be higher than your own role (${by.role})` }]);
      const expires = input.expires_at ? Date.parse(input.expires_at) : null;
      if (expires !== null && expires <= clock.now()) throw validationFailed([{ field: 'expires_at', message: 'must be in the future' }]);
      const token = TOKEN_PREFIX + newToken();
      return transaction(() => {
        // Counted in the transaction that inserts: parallel creates cannot all see 49.
        if (repo.countOfAccount(by.id) >= MAX_TOKENS_PER_ACCOUNT) {
          throw conflict(`too many API tokens: an account may hold at most ${MAX_TOKENS_PER_ACCOUNT}; revoke one first`);
        }
        const id = repo.insert({
          account_id: by.id,
          name: input.name,
          role: input.role,
          token_hash: sha256(token),
          created_at: isoSeconds(clock.now()),
          expires_at: expires,
        });
        audit.write({
          action: 'token.create',
          subject: tokenSubject({ id, name: input.name }),
          summary: `${nameOf()} created API token “${input.name}” (${input.role})`,
          detail: { id, name: input.name, role: input.role },
        });
        return { ...presentToken({ ...repo.byId(id)!, username: by.username }), token };
      })();
    },

    revoke(id: number, by: SessionUser): void {
      transaction(() => {
        const row = visible(id, by);
        repo.remove(row.id);
        const owner = row.username === by.username ? '' : ` of ${row.username}`;
        audit.write({
          action: 'token.revoke',
          subject: tokenSubject(row),
          summary: `${nameOf()} revoked API token “${row.name}”${owner}`,
          detail: { id: row.id, name: row.name },
        });
        bus.publish('token.revoked', { tokenId: row.id, reason: 'token revoked' });
      })();
    },

    /**
     * The principal of a bearer token, or undefined for a malformed, unknown, expired or revoked
     * token and for a disabled owner. Records the use at most once a minute.
     */
    authenticate(token: string, ip: string | null): TokenPrincipal | undefined {
      if (!TOKEN_PATTERN.test(token)) return undefined;
      const hash = sha256(token);
      const row = repo.byHash(hash);
      const owner = row && owners.byId(row.account_id);
      if (!row || !owner || !secretsEqual(hash, row.token_hash) || !owner.enabled) return undefined;
      const now = clock.now();
      if (row.expires_at !== null && now >= row.expires_at) return undefined;
      if (row.last_used_at === null || now - row.last_used_at >= LAST_USE_MS) unlessBusy(() => repo.touch(row.id, now, ip, now - LAST_USE_MS));
      return {
        user: { id: row.account_id, username: owner.username, role: lowerRole(row.role, owner.role) },
        token: { id: row.id, name: row.name },
        mustChangePassword: owner.must_change_password === 1,
      };
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
