import { nameOf } from '../audit.js';
import type { CreatedEnrollmentToken, EnrollAnswer } from '../contract/hosts.js';
import { conflict, invalidToken, notFound } from '../errors.js';
import { isoMillis } from '../time.js';
import { announceStatus, hostSubject, type HostParts, type Who } from './parts.js';
import type { Releases } from '../releases/releases.js';
import type { EnrollmentTokenCreate, EnrollRequest } from '../contract/inputs/hosts.js';
import { issueToken } from './tokens.js';

/**
 * Enrollment: administrators make enrollment tokens (a re-bind token names the host it may enroll
 * again), and an agent spends one to become a host with its own host token.
 */
export function createEnrollment(parts: HostParts, releases: Releases) {
  const { ctx, repo, audit, view } = parts;

  const createTokenTx = ctx.transaction((input: EnrollmentTokenCreate, hash: string, who: Who, now: number) => {
    const hostId = input.host_id ?? null;
    if (hostId !== null) {
      const host = repo.hostById(hostId);
      if (!host) throw notFound('host not found');
      if (host.state !== 'active') throw conflict(host.state === 'deleted' ? 'host is deleted' : 'host is being deleted');
    }
    const id = repo.insertEnrollmentToken(input.name, hash, who.actor, now, now + input.expires_in_s * 1000, input.max_uses, hostId);
    const detail = { name: input.name, max_uses: input.max_uses, expires_in_s: input.expires_in_s, ...(hostId !== null ? { host_id: hostId } : {}) };
    audit.write({ action: 'enrollment_token.create', subject: { type: 'enrollment_token', id: String(id), name: input.name }, summary: `${nameOf()} created host enrollment token “${input.name}”`, detail });
    return id;
  });

  const revokeTokenTx = ctx.transaction((id: number, who: Who, now: number) => {
    if (!repo.enrollmentTokenById(id)) throw notFound('enrollment token not found');
    const row = repo.enrollmentTokenById(id)!;
    if (repo.revokeEnrollmentToken(id, now)) audit.write({ action: 'enrollment_token.revoke', subject: { type: 'enrollment_token', id: String(id), name: row.name }, summary: `${nameOf()} revoked host enrollment token “${row.name}”` });
  });

  const enrollTx = ctx.transaction((tokenId: number, body: EnrollRequest, ip: string | null, now: number) => {
    const existing = repo.liveHostByMachine(body.machine_id);
    // Only a token made for the host re-binds it: a machine id is no secret (viewers read it), and an
    // ordinary token must not take over a host and its history.
    const rebindFor = repo.enrollmentTokenById(tokenId)?.host_id ?? null;
    if (rebindFor !== null) {
      if (existing?.id !== rebindFor) throw conflict('this enrollment token re-binds another machine');
      if (existing.state !== 'active') throw conflict('host is being deleted');
    } else if (existing) {
      throw conflict('machine already enrolled');
    }
    // The use is taken here, inside the transaction that creates the host: two enrollments racing
    // for the last use cannot both get one.
    if (!repo.useEnrollmentToken(tokenId, now)) throw invalidToken();
    let hostId: number;
    if (existing) {
      hostId = existing.id;
      repo.revokeHostTokens(hostId, now);
      repo.rebindHost(hostId, body.hostname, body.agent_version, tokenId, now);
    } else {
      hostId = repo.insertHost(body.machine_id, body.hostname, now, tokenId, body.agent_version, view.intervalS);
    }
    const { token, hash } = issueToken('host');
    repo.insertHostToken(hostId, hash, now);
    audit.write({
      // The agent acts for the host it has just become.
      actor: { type: 'agent', id: hostId, name: body.hostname },
      ip,
      action: existing ? 'host.rebind' : 'host.enroll',
      subject: hostSubject({ id: hostId, hostname: body.hostname }),
      summary: `host ${body.hostname} enrolled${existing ? ' again (re-bound)' : ''}${ip ? ` from ${ip}` : ''}`,
      detail: { machine_id: body.machine_id, agent_version: body.agent_version, enrollment_token: tokenId },
    });
    announceStatus(parts, hostId);
    return { hostId, token };
  });

  return {
    /** The token and its limits; the route adds the install command that carries it. */
    createEnrollmentToken(input: EnrollmentTokenCreate, who: Who): Omit<CreatedEnrollmentToken, 'install_command' | 'install_notes'> {
      const now = ctx.clock.now();
      const { token, hash } = issueToken('enrollment');
      const id = createTokenTx(input, hash, who, now);
      return { id, token, expires_at: isoMillis(now + input.expires_in_s * 1000), max_uses: input.max_uses, host_id: input.host_id ?? null };
    },

    revokeEnrollmentToken: (id: number, who: Who) => revokeTokenTx(id, who, ctx.clock.now()),

    enroll(tokenId: number, body: EnrollRequest, ip: string | null): EnrollAnswer {
      const { hostId, token } = enrollTx(tokenId, body, ip, ctx.clock.now());
      return { host_id: hostId, host_token: token, heartbeat_interval_s: view.intervalS, manifest_public_key: releases.publicKeyPem };
    },
  };
}
