import { createHash, randomUUID } from 'node:crypto';
import { createAuditLog } from '../access/audit.js';
import type { AppContext } from '../context.js';
import type { HostEvent } from '../contract/hosts.js';
import { badRequest, conflict, invalidToken, notFound } from '../errors.js';
import type { InstanceService } from '../registry/service.js';
import { isoMillis } from '../time.js';
import { applyHostDrift, hostDrift } from './drift-apply.js';
import { createHeartbeatLimit } from './heartbeat-limit.js';
import { compareVersions, type Releases } from './releases.js';
import { createHostRepo, type DeletionRow, type EnrollmentTokenRow, type HostRow } from './repo.js';
import type {
  AgentCommand,
  Deletion,
  DriftApply,
  EnrollBody,
  EnrollmentTokenCreate,
  Guest,
  HeartbeatBody,
  HostDetail,
  HostPatch,
  HostStatus,
  HostSummary,
} from './schema.js';
import { hashMatches, issueToken, sha256 } from './tokens.js';

/** "no such heartbeat within 5 minutes marks it failed" */
export const UPGRADE_TIMEOUT_MS = 5 * 60 * 1000;
/** The receipt token "expires after 7 days" (counted from when the uninstall command is delivered). */
export const RECEIPT_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
/** A host is online while a heartbeat came within this many intervals. */
export const ONLINE_INTERVALS = 3;

export interface HostsOptions {
  /** Seconds between heartbeats, sent to agents (default 30). */
  heartbeatIntervalS?: number;
}

export type { HostEvent };

export interface Who {
  actor: string | null;
  ip: string | null;
  /** The personal API token the actor used, named in the audit entry. */
  token?: { id: number; name: string } | undefined;
}

const iso = (ms: number | null) => (ms === null ? null : isoMillis(ms));

export type HostService = ReturnType<typeof createHostService>;

/** Hosts, their agents' credentials, heartbeats, deletion receipts, upgrades and registry drift. */
export function createHostService(ctx: AppContext, instances: InstanceService, releases: Releases, options: HostsOptions = {}) {
  const { db, clock, bus, transaction } = ctx;
  const repo = createHostRepo(db);
  const audit = createAuditLog(ctx);
  /** A host's name for its audit entries, so the audit page names the host rather than its id. */
  const hostnameOf = (id: number) => repo.hostById(id)?.hostname;
  const intervalS = options.heartbeatIntervalS ?? 30;
  const heartbeatLimit = createHeartbeatLimit(clock, intervalS);

  function statusOf(host: HostRow, now = clock.now()): HostStatus {
    if (host.state === 'deleted') return 'deleted';
    if (host.state === 'deleting') return 'deleting';
    const online = host.last_heartbeat_at !== null && now - host.last_heartbeat_at <= ONLINE_INTERVALS * intervalS * 1000;
    return online ? 'online' : 'offline';
  }

  /** An in-progress upgrade older than the timeout is shown failed even before the next heartbeat writes it. */
  function upgradeOf(host: HostRow, now: number): HostSummary['upgrade'] {
    if (!host.upgrade_state || !host.upgrade_version || host.upgrade_requested_at === null) return null;
    const timedOut = host.upgrade_state === 'in_progress' && host.upgrade_started_at !== null && now - host.upgrade_started_at > UPGRADE_TIMEOUT_MS;
    return {
      state: timedOut ? 'failed' : host.upgrade_state,
      version: host.upgrade_version,
      from: host.upgrade_from,
      requested_at: isoMillis(host.upgrade_requested_at),
      started_at: iso(host.upgrade_started_at),
      finished_at: timedOut ? isoMillis(host.upgrade_started_at! + UPGRADE_TIMEOUT_MS) : iso(host.upgrade_finished_at),
    };
  }

  /** What every host row shows that is not in the row: counted once per list, not per host. */
  const contextOf = (now: number) => ({ rebindable: repo.rebindableHosts(now), shipped: releases.currentVersion() });

  function present(host: HostRow, counts: { guests: number; drift: number }, now = clock.now(), context = contextOf(now)): HostSummary {
    return {
      id: host.id,
      hostname: host.hostname,
      machine_id: host.machine_id,
      status: statusOf(host, now),
      enrolled_at: isoMillis(host.enrolled_at),
      last_heartbeat_at: iso(host.last_heartbeat_at),
      agent_version: host.agent_version,
      agent_started_at: iso(host.agent_started_at),
      heartbeat_interval_s: intervalS,
      addresses: JSON.parse(host.addresses) as string[],
      uptime_s: host.uptime_s,
      hypervisor_version: host.hypervisor_version,
      sync_registry: host.sync_registry === 1,
      allow_rebind: context.rebindable.has(host.id),
      upgrade_available: host.state === 'active' && !!context.shipped && compareVersions(context.shipped, host.agent_version) > 0,
      deleted_at: iso(host.deleted_at),
      upgrade: upgradeOf(host, now),
      guest_count: counts.guests,
      drift_count: counts.drift,
    };
  }

  const eventOf = (host: HostRow): HostEvent => ({
    id: host.id,
    hostname: host.hostname,
    status: statusOf(host),
    last_heartbeat_at: iso(host.last_heartbeat_at),
    agent_version: host.agent_version,
  });

  function emitStatus(hostId: number): void {
    const host = repo.hostById(hostId);
    if (host) bus.publish('host.status', eventOf(host));
  }

  function presentDeletion(row: DeletionRow | undefined): Deletion | null {
    if (!row) return null;
    return {
      operation_id: row.id,
      status: row.status,
      created_by: row.created_by,
      created_at: isoMillis(row.created_at),
      delivered_at: iso(row.delivered_at),
      confirmed_at: iso(row.confirmed_at),
      receipt_expires_at: iso(row.receipt_expires_at),
    };
  }

  function requireHost(id: number): HostRow {
    const host = repo.hostById(id);
    if (!host) throw notFound('host not found');
    return host;
  }

  function enrollmentState(row: EnrollmentTokenRow, now: number): 'active' | 'expired' | 'used_up' | 'revoked' {
    if (row.revoked_at !== null) return 'revoked';
    if (row.uses >= row.max_uses) return 'used_up';
    if (now >= row.expires_at) return 'expired';
    return 'active';
  }

  const presentEnrollmentToken = (row: EnrollmentTokenRow, now = clock.now()) => ({
    id: row.id,
    name: row.name,
    created_by: row.created_by,
    created_at: isoMillis(row.created_at),
    expires_at: isoMillis(row.expires_at),
    max_uses: row.max_uses,
    uses: row.uses,
    revoked_at: iso(row.revoked_at),
    state: enrollmentState(row, now),
    host_id: row.host_id,
  });

  // ---- enrollment -------------------------------------------------------------------------

  const enrollTx = transaction((tokenId: number, body: EnrollBody, now: number) => {
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
      repo.rebindHost(hostId, body.hostname, body.agent_version, tokenId);
    } else {
      hostId = repo.insertHost(body.machine_id, body.hostname, now, tokenId, body.agent_version, intervalS);
    }
    const { token, hash } = issueToken('host');
    repo.insertHostToken(hostId, hash, now);
    return { hostId, token, rebound: !!existing };
  });

  // ---- heartbeat --------------------------------------------------------------------------

  const guestsHash = (guests: readonly Guest[]) =>
    createHash('sha256')
      .update(JSON.stringify([...guests].sort((a, b) => a.vmid - b.vmid).map((g) => [g.vmid, g.name, g.type, g.status])))
      .digest('base64');

  const heartbeatTx = transaction((tokenHash: string, body: HeartbeatBody, now: number) => {
    // Re-checked inside the transaction: a deletion delivered to a parallel heartbeat revoked the token.
    const tok = repo.hostTokenByHash(tokenHash);
    const host = tok && tok.revoked_at === null ? repo.hostById(tok.host_id) : undefined;
    if (!host || host.state === 'deleted') throw invalidToken();
    const wasOnline = statusOf(host, now) === 'online';
    repo.updateFacts({
      id: host.id,
      hostname: body.hostname,
      agent_version: body.agent_version,
      agent_started_at: body.started_at,
      last_heartbeat_at: now,
      addresses: JSON.stringify(body.addresses),
      uptime_s: body.uptime_s ?? null,
      hypervisor_version: body.hypervisor_version,
    });
    // Duplicate vmids in one report: the last one wins.
    const guests = [...new Map(body.guests.map((g) => [g.vmid, g])).values()];
    const hash = guestsHash(guests);
    if (hash !== host.guests_hash) {
      repo.replaceGuests(host.id, guests);
      repo.setGuestsHash(host.id, hash);
    }

    const commands: AgentCommand[] = [];
    let upgradeResult: 'succeeded' | 'failed' | 'offered' | undefined;
    if (host.state === 'deleting') {
      const deletion = repo.latestDeletionOf(host.id);
      if (deletion?.status === 'pending') {
        const receipt = issueToken('receipt');
        repo.deliverDeletion(deletion.id, receipt.hash, now + RECEIPT_LIFETIME_MS, now);
        // "from then on the host token is revoked"
        repo.revokeHostTokens(host.id, now);
        commands.push({ type: 'uninstall', operation_id: deletion.id, receipt_token: receipt.token });
      }
    } else if (host.upgrade_state === 'in_progress' && host.upgrade_version && host.upgrade_started_at !== null) {
      const late = now - host.upgrade_started_at > UPGRADE_TIMEOUT_MS;
      // Only the new process counts: the new version, started after the upgrade began.
      const fresh = body.agent_version === host.upgrade_version && body.started_at > host.upgrade_started_at;
      if (late || fresh) {
        upgradeResult = fresh && !late ? 'succeeded' : 'failed';
        repo.setUpgrade(host.id, {
          state: upgradeResult,
          version: host.upgrade_version,
          from: host.upgrade_from,
          requestedAt: host.upgrade_requested_at,
          startedAt: host.upgrade_started_at,
          finishedAt: late ? host.upgrade_started_at + UPGRADE_TIMEOUT_MS : now,
        });
      }
    } else if (host.upgrade_state === 'pending' && host.upgrade_version) {
      // The upgrade begins when it is offered; the agent is told once.
      repo.setUpgrade(host.id, {
        state: 'in_progress',
        version: host.upgrade_version,
        from: body.agent_version,
        requestedAt: host.upgrade_requested_at,
        startedAt: now,
        finishedAt: null,
      });
      // A downgrade was requested with rollback: true (requestUpgrade refuses it otherwise); the agent needs to be told.
      const rollback = host.upgrade_from !== null && compareVersions(host.upgrade_version, host.upgrade_from) < 0;
      commands.push({ type: 'upgrade', version: host.upgrade_version, ...(rollback ? { rollback: true as const } : {}) });
      upgradeResult = 'offered';
    }
    return { host: repo.hostById(host.id)!, commands, wasOnline, upgradeResult };
  });

  const receiptTx = transaction((operationId: string, hostId: number, now: number) => {
    if (!repo.confirmDeletion(operationId, now)) return false;
    repo.revokeHostTokens(hostId, now);
    repo.setState(hostId, 'deleted', now);
    return true;
  });

  const deleteTx = transaction((hostId: number, force: boolean, by: string | null, now: number) => {
    const host = repo.hostById(hostId);
    if (!host) throw notFound('host not found');
    if (host.state === 'deleted') throw conflict('host already deleted');
    let deletion = repo.latestDeletionOf(hostId);
    if (host.state !== 'deleting' || !deletion || (deletion.status !== 'pending' && deletion.status !== 'delivered')) {
      const id = randomUUID();
      repo.insertDeletion(id, hostId, by, now);
      repo.setState(hostId, 'deleting', null);
      deletion = repo.deletionById(id)!;
    }
    if (force) {
      repo.forceDeletions(hostId, now);
      repo.revokeHostTokens(hostId, now);
      repo.setState(hostId, 'deleted', now);
    }
    return repo.deletionById(deletion.id)!;
  });

  const revokeTokenTx = transaction((hostId: number, now: number) => {
    const host = repo.hostById(hostId);
    if (!host) throw notFound('host not found');
    if (host.state !== 'active') throw conflict('host is being deleted');
    repo.revokeHostTokens(hostId, now);
  });

  const createTokenTx = transaction((input: EnrollmentTokenCreate, hash: string, hostId: number | null, by: string | null, now: number) => {
    if (hostId !== null) {
      const host = repo.hostById(hostId);
      if (!host) throw notFound('host not found');
      if (host.state !== 'active') throw conflict(host.state === 'deleted' ? 'host is deleted' : 'host is being deleted');
    }
    return repo.insertEnrollmentToken(input.name, hash, by, now, now + input.expires_in_s * 1000, input.max_uses, hostId);
  });

  const upgradeTx = transaction((hostId: number, version: string, rollback: boolean, now: number) => {
    const host = repo.hostById(hostId);
    if (!host) throw notFound('host not found');
    if (host.state !== 'active') throw conflict('host is being deleted');
    if (host.agent_version === version) throw conflict('host already runs that version');
    if (compareVersions(version, host.agent_version) < 0 && !rollback) {
      throw conflict(`${version} is older than the agent's ${host.agent_version}: send "rollback": true to roll back`);
    }
    repo.setUpgrade(hostId, { state: 'pending', version, from: host.agent_version, requestedAt: now, startedAt: null, finishedAt: null });
  });

  function applyDrift(hostId: number, request: DriftApply, who: Who | null) {
    const host = requireHost(hostId);
    if (host.state === 'deleted') throw conflict('host is deleted');
    const result = applyHostDrift(repo, instances, host, request);
    if (who && result.applied.length) {
      audit.write({ ...who, action: 'host.drift_apply', target: `host:${hostId}`, detail: { applied: result.applied.map((i) => i.vmid), actor: `agent:${host.hostname}` } });
    }
    return result;
  }

  function get(id: number): HostDetail {
    const host = requireHost(id);
    const guests = repo.guestsOf(id);
    const drift = hostDrift(repo, host, guests);
    return { ...present(host, { guests: guests.length, drift: drift.length }), guests, drift, deletion: presentDeletion(repo.latestDeletionOf(id)) };
  }

  let lastSweep = clock.now();
  const failUpgradeTx = transaction((hostId: number) => {
    const host = repo.hostById(hostId);
    if (host?.upgrade_state !== 'in_progress' || host.upgrade_started_at === null) return undefined;
    repo.setUpgrade(host.id, {
      state: 'failed',
      version: host.upgrade_version,
      from: host.upgrade_from,
      requestedAt: host.upgrade_requested_at,
      startedAt: host.upgrade_started_at,
      finishedAt: host.upgrade_started_at + UPGRADE_TIMEOUT_MS,
    });
    return host;
  });

  /**
   * Run every few seconds by the app: announces hosts that went offline (no heartbeat within three
   * intervals) on host.status, and writes down upgrades that got no fresh heartbeat within 5 minutes.
   */
  function sweep(): void {
    const now = clock.now();
    const line = ONLINE_INTERVALS * intervalS * 1000;
    for (const host of repo.wentOffline(lastSweep - line, now - line)) bus.publish('host.status', eventOf(host));
    lastSweep = now;
    for (const stale of repo.upgradesTimedOut(now - UPGRADE_TIMEOUT_MS)) {
      const host = failUpgradeTx(stale.id);
      if (!host) continue;
      audit.write({
        actor: null,
        ip: null,
        action: 'host.upgrade_failed',
        target: `host:${host.id}`,
        detail: { host: host.hostname, version: host.upgrade_version, from: host.upgrade_from, reason: 'no heartbeat from the new version within 5 minutes' },
      });
      emitStatus(host.id);
    }
  }

  return {
    repo,
    sweep,

    createEnrollmentToken(input: EnrollmentTokenCreate, who: Who) {
      const now = clock.now();
      const { token, hash } = issueToken('enrollment');
      const hostId = input.host_id ?? null;
      const id = createTokenTx(input, hash, hostId, who.actor, now);
      const detail = { name: input.name, max_uses: input.max_uses, expires_in_s: input.expires_in_s, ...(hostId !== null ? { host_id: hostId } : {}) };
      audit.write({ ...who, action: 'enrollment_token.create', target: `enrollment_token:${id}`, detail });
      return { id, token, expires_at: isoMillis(now + input.expires_in_s * 1000), max_uses: input.max_uses, host_id: hostId };
    },
    listEnrollmentTokens: () => {
      const now = clock.now();
      return repo.listEnrollmentTokens().map((row) => presentEnrollmentToken(row, now));
    },
    revokeEnrollmentToken(id: number, who: Who): void {
      if (!repo.enrollmentTokenById(id)) throw notFound('enrollment token not found');
      if (repo.revokeEnrollmentToken(id, clock.now())) {
        audit.write({ ...who, action: 'enrollment_token.revoke', target: `enrollment_token:${id}` });
      }
    },

    /** The enrollment token a request presents, if it can still be used (checked again when used). */
    findUsableEnrollmentToken(token: string): EnrollmentTokenRow | undefined {
      const row = repo.enrollmentTokenByHash(sha256(token));
      if (!row || !hashMatches(token, row.token_hash)) return undefined;
      return enrollmentState(row, clock.now()) === 'active' ? row : undefined;
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
      if (row.receipt_expires_at === null || clock.now() >= row.receipt_expires_at) return undefined;
      return row;
    },

    enroll(tokenId: number, body: EnrollBody, ip: string | null) {
      const result = enrollTx(tokenId, body, clock.now());
      audit.write({
        actor: `agent:${body.hostname}`,
        ip,
        action: result.rebound ? 'host.rebind' : 'host.enroll',
        target: `host:${result.hostId}`,
        detail: { machine_id: body.machine_id, agent_version: body.agent_version, enrollment_token: tokenId },
      });
      emitStatus(result.hostId);
      return {
        host_id: result.hostId,
        host_token: result.token,
        heartbeat_interval_s: intervalS,
        manifest_public_key: releases.publicKeyPem,
      };
    },

    /** Spends one heartbeat of the host's budget (before its body is read), or throws 429. */
    admitHeartbeat(host: HostRow): void {
      heartbeatLimit.take(host.id);
    },

    heartbeat(token: string, body: HeartbeatBody): { heartbeat_interval_s: number; commands: AgentCommand[] } {
      const result = heartbeatTx(sha256(token), body, clock.now());
      const { host } = result;
      if (result.upgradeResult === 'succeeded' || result.upgradeResult === 'failed') {
        audit.write({
          actor: `agent:${host.hostname}`,
          ip: null,
          action: `host.upgrade_${result.upgradeResult}`,
          target: `host:${host.id}`,
          detail: { version: host.upgrade_version, from: host.upgrade_from },
        });
      }
      if (host.sync_registry === 1 && host.state === 'active') applyDrift(host.id, { all: true }, null);
      bus.publish('host.heartbeat', eventOf(host));
      if (!result.wasOnline || result.commands.some((c) => c.type === 'uninstall')) bus.publish('host.status', eventOf(host));
      return { heartbeat_interval_s: intervalS, commands: result.commands };
    },

    confirmReceipt(deletion: DeletionRow, ip: string | null): void {
      if (deletion.status === 'confirmed') return; // a retry: idempotent
      if (receiptTx(deletion.id, deletion.host_id, clock.now())) {
        const host = repo.hostById(deletion.host_id)!;
        audit.write({ actor: `agent:${host.hostname}`, ip, action: 'host.deleted', target: `host:${host.id}`, detail: { operation_id: deletion.id } });
        emitStatus(host.id);
      }
    },

    list(): HostSummary[] {
      const now = clock.now();
      const context = contextOf(now);
      const counts = new Map(repo.guestCounts().map((c) => [c.host_id, c]));
      const orphans = repo.orphanInstances().length;
      return repo.listHosts().map((host) => {
        const c = counts.get(host.id);
        const drift = host.state === 'deleted' ? 0 : (c?.drift ?? 0) + orphans;
        return present(host, { guests: c?.guests ?? 0, drift }, now, context);
      });
    },

    get,

    update(id: number, patch: HostPatch, who: Who): HostDetail {
      const host = requireHost(id);
      if (host.state === 'deleted') throw conflict('host is deleted');
      repo.setSettings(id, patch.sync_registry, undefined);
      audit.write({ ...who, action: 'host.update', target: `host:${id}`, detail: { host: host.hostname, ...patch } });
      return get(id);
    },

    remove(id: number, force: boolean, who: Who): Deletion {
      const deletion = deleteTx(id, force, who.actor, clock.now());
      audit.write({ ...who, action: force ? 'host.force_delete' : 'host.delete', target: `host:${id}`, detail: { host: hostnameOf(id), operation_id: deletion.id } });
      emitStatus(id);
      return presentDeletion(deletion)!;
    },

    /** A leaked host token: revoked at once; the host enrolls again (same host, new token) with a re-bind token made for it. */
    revokeHostToken(id: number, who: Who): void {
      revokeTokenTx(id, clock.now());
      audit.write({ ...who, action: 'host.revoke_token', target: `host:${id}`, detail: { host: hostnameOf(id) } });
      emitStatus(id);
    },

    requestUpgrade(id: number, request: { version?: string; rollback?: boolean }, who: Who): HostDetail {
      const target = request.version ?? releases.currentVersion();
      if (!target) throw conflict('no agent release is available');
      if (!releases.versions().includes(target)) throw badRequest('unknown agent version');
      const rollback = request.rollback === true;
      upgradeTx(id, target, rollback, clock.now());
      audit.write({ ...who, action: 'host.upgrade_request', target: `host:${id}`, detail: { host: hostnameOf(id), version: target, ...(rollback ? { rollback } : {}) } });
      return get(id);
    },

    applyDrift,
  };
}
