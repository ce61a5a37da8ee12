import { nameOf } from '../audit.js';
import { conflict } from '../errors.js';
import { announceStatus, hostSubject, requireHost, type HostParts, type Who } from './parts.js';
import { enrollmentState } from './present.js';
import type { DeletionRow, EnrollmentTokenRow, HostRow } from './repo.js';
import { hashMatches, sha256 } from './tokens.js';

/**
 * The agents' credentials: what each kind of bearer token resolves to (undefined for any token that
 * does not hold: the routes answer every one of them alike), and revoking a leaked host token.
 */
export function createCredentials(parts: HostParts) {
  const { ctx, repo, audit } = parts;

  const revokeHostTokenTx = ctx.transaction((hostId: number, who: Who, now: number) => {
    const host = requireHost(repo, hostId);
    if (host.state !== 'active') throw conflict('host is being deleted');
    repo.revokeHostTokens(hostId, now);
    audit.write({ action: 'host.revoke_token', subject: hostSubject(host), summary: `${nameOf()} revoked the token of host ${host.hostname}`, detail: { host: host.hostname } });
    announceStatus(parts, hostId);
  });

  return {
    /** The enrollment token a request presents, if it can still be used (checked again when used). */
    findUsableEnrollmentToken(token: string): EnrollmentTokenRow | undefined {
      const row = repo.enrollmentTokenByHash(sha256(token));
      if (!row || !hashMatches(token, row.token_hash)) return undefined;
      return enrollmentState(row, ctx.clock.now()) === 'active' ? row : undefined;
    },

    /** The live host of a host token, or undefined for an unknown or revoked token. */
    findHostByToken(token: string): HostRow | undefined {
      const tok = repo.hostTokenByHash(sha256(token));
      if (!tok || tok.revoked_at !== null || !hashMatches(token, tok.token_hash)) return undefined;
      const host = repo.hostById(tok.host_id);
      return host && host.state !== 'deleted' ? host : undefined;
    },

    /** The deletion a receipt token belongs to, only when it is that operation's unexpired token. */
    findDeletionByReceipt(operationId: string, token: string): DeletionRow | undefined {
      const row = repo.deletionById(operationId);
      if (!row || !row.receipt_hash || !hashMatches(token, row.receipt_hash)) return undefined;
      if (row.receipt_expires_at === null || ctx.clock.now() >= row.receipt_expires_at) return undefined;
      return row;
    },

    /** A leaked host token: revoked at once; the host enrolls again (same host, new token) with a re-bind token made for it. */
    revokeHostToken: (hostId: number, who: Who) => revokeHostTokenTx(hostId, who, ctx.clock.now()),
  };
}
