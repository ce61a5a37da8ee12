import { nameOf, type AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import { CHECKS, type FleetHealth, type GuestBackup, type InstanceHealth, type Policy } from '../contract/fleet.js';
import type { AgentChannel } from '../contract/versions.js';
import type { BackupReport, FleetHealthQuery, PoliciesInput } from '../contract/inputs/fleet.js';
import { BACKUPS_PER_GUEST } from '../contract/inputs/fleet.js';
import type { JobKey } from '../contract/jobs.js';
import type { PlacedInstance } from '../contract/registry.js';
import { HttpError, notFound, validationFailed } from '../errors.js';
import { isoMillis } from '../time.js';
import { checkInstance, mergeChecks, type Checks, type FleetFacts, type HostFacts, type InstanceFacts } from './checks.js';
import { createFleetRepo, type BackupJob, type NewestBackup } from './repo.js';

/** What fleet health reads of the other features, handed in by the composition root (server/services.ts). */
export interface FleetDeps {
  audit: AuditLog;
  /** A collection's vmids now (server/collections), or the 404 when there is no such collection. */
  collectionVmids: CollectionVmids;
  instances: { list(query: { sort: 'vmid'; descending: false }): PlacedInstance[]; listInPages(): Promise<PlacedInstance[]>; exists(vmid: number): boolean };
  /** Where each vmid runs now (the registry's `host` and `guest_status`), kept fresh by hosts. */
  placements(): ReadonlyMap<number, { host: { id: number; name: string }; guest_status: string }>;
  /** Every host not removed: whether it is online now, its last heartbeat (ms) and its agent's version (cheap: no drift, no counts). */
  hosts: {
    facts(): {
      id: number;
      hostname: string;
      online: boolean;
      last_heartbeat_at: number | null;
      agent_version: string;
      agent_channel: AgentChannel;
      agent_pin: string | null;
      /** The upgrade its channel offers it now (none when pinned or current). */
      offered: string | undefined;
    }[];
  };
  jobs: { lastSuccesses(): { key: JobKey; at: string | null }[] };
}

/** A collection's vmids (its 404 when there is none). */
export type CollectionVmids = (id: number) => number[];

/**
 * The alert rules run every few seconds, and the checks read the registry's whole list (10,000
 * instances are ~12 ms): policy.failed, whose for_s is an hour by default, reads them at most once a
 * minute, or at once after a report, a policy, an instance or a host's status changed (a host going
 * offline holds its guests' alerts from the next evaluation on).
 */
const ALERT_CHECKS_MS = 60_000;

/** One instance failing a check, for the policy.failed alert rule. */
export interface PolicyFailure {
  vmid: number;
  name: string;
  message: string;
}

/**
 * PRODUCT.md "Fleet health: policies across every source": the backups and backup jobs agents report,
 * the policies, and every instance a policy covers checked against the running guests (agents), the
 * tailnet (tailscale_sync), PatchMon, Semaphore, the backups and the agent versions, each cell with
 * its reason in words.
 */
export function createFleetHealth(ctx: AppContext, deps: FleetDeps) {
  const repo = createFleetRepo(ctx.db);
  const collectionVmids = deps.collectionVmids;
  // The reports change a few times an hour; the fleet-health page and the alert rules read them every few seconds.
  let reports: { newest: Map<number, NewestBackup>; jobs: Map<number, BackupJob[]>; reported: Map<number, number> } | undefined;
  const reportsNow = () => {
    if (!reports) {
      const jobs = new Map<number, BackupJob[]>();
      for (const j of repo.jobs()) jobs.set(j.host_id, [...(jobs.get(j.host_id) ?? []), j]);
      reports = { newest: repo.newest(), jobs, reported: repo.reports() };
    }
    return reports;
  };

  let forAlerts: { at: number; value: { failing: PolicyFailure[]; held: Set<number> } } | undefined;
  // The registry's list of 2,500 instances was two thirds of a fleet-health answer: its rows are kept,
  // and kept up to date from the instance events (re-reading all of them after each write was 5% of
  // the server's CPU under a stream of creates); where each runs is read fresh from the placements.
  let registry: Map<number, PlacedInstance> | undefined;
  let inVmidOrder: PlacedInstance[] | undefined;
  const registryNow = (): PlacedInstance[] => {
    if (!registry) registry = new Map(deps.instances.list({ sort: 'vmid', descending: false }).map((i) => [i.vmid, i]));
    return (inVmidOrder ??= [...registry.values()].sort((a, b) => a.vmid - b.vmid));
  };
  const changed = () => {
    reports = undefined;
    forAlerts = undefined;
  };
  /** The changes told while the registry is read a page at a time, applied to it once it is read. */
  let missed: ((rows: Map<number, PlacedInstance>) => void)[] | undefined;
  const instancesChanged = (keep: (rows: Map<number, PlacedInstance>) => void) => {
    if (registry) keep(registry);
    missed?.push(keep);
    inVmidOrder = undefined;
    changed();
  };
  /** Counts imports: a read of the registry that an import overtook is read again. */
  let imports = 0;
  let reading: Promise<void> | undefined;
  /**
   * Reads the registry, when it is not held, a page per turn (server/registry `listInPages`): after an
   * import of 200,000 instances, in one piece it was a third of a second, and as much again of garbage
   * collection, in the alert rules' first turn. Each change told meanwhile is applied on top (each
   * is a set or a delete by vmid: applied twice, the same).
   */
  function ready(): Promise<void> {
    if (registry) return Promise.resolve();
    reading ??= (async () => {
      for (;;) {
        const read = imports;
        missed = [];
        const rows = new Map((await deps.instances.listInPages()).map((i) => [i.vmid, i]));
        if (read !== imports) continue;
        for (const keep of missed) keep(rows);
        registry = rows;
        inVmidOrder = undefined;
        changed();
        return;
      }
    })().finally(() => {
      missed = undefined;
      reading = undefined;
    });
    return reading;
  }

  const reportTx = ctx.transaction((hostId: number, report: BackupReport, now: number) => {
    repo.replaceReport(hostId, report, now);
    ctx.afterCommit(changed);
  });

  const putTx = ctx.transaction((policies: PoliciesInput): Policy[] => {
    const before = repo.policies();
    repo.putPolicies(policies);
    deps.audit.write({
      action: 'policy.update',
      subject: { type: 'policies', id: 'fleet-health', name: 'fleet-health policies' },
      summary: `${nameOf()} changed the fleet-health policies`,
      changes: JSON.stringify(before) === JSON.stringify(policies) ? [] : [{ field: 'policies', before, after: policies }],
    });
    ctx.afterCommit(changed);
    return policies;
  });

  /** A collection's vmids, or none when it no longer exists (a policy may outlive its collection). */
  const vmidsOr = (id: number): Set<number> => {
    try {
      return new Set(collectionVmids(id));
    } catch (err) {
      if (err instanceof HttpError && err.status === 404) return new Set();
      throw err;
    }
  };

  /** Every instance a policy covers, checked now. */
  function evaluate(now: number, only?: Set<number>): { instance: PlacedInstance; result: InstanceHealth; offline: boolean }[] {
    const policies = repo.policies();
    // No policy, nothing covered: the registry is not read (it is re-read after every write otherwise).
    if (policies.length === 0) return [];
    const scopes = policies.map((p) => ({ stack: 'stack' in p.scope ? p.scope.stack : undefined, vmids: 'collection_id' in p.scope ? vmidsOr(p.scope.collection_id) : undefined, checks: p.checks }));
    const { newest, jobs, reported } = reportsNow();
    const hosts = new Map<number, HostFacts>();
    for (const h of deps.hosts.facts()) {
      hosts.set(h.id, {
        id: h.id,
        name: h.hostname,
        online: h.online,
        last_heartbeat_at: h.last_heartbeat_at,
        agent_version: h.agent_version,
        agent_channel: h.agent_channel,
        agent_pin: h.agent_pin,
        offered: h.offered,
        backups_reported_at: reported.get(h.id) ?? null,
        jobs: jobs.get(h.id) ?? [],
      });
    }
    const synced = new Map(deps.jobs.lastSuccesses().map((j) => [j.key, j.at === null ? null : Date.parse(j.at)]));
    const fleet: FleetFacts = {
      tailscale: synced.get('tailscale_sync') ?? null,
      patchmon: synced.get('patchmon_sync') ?? null,
      semaphore: synced.get('semaphore_sync') ?? null,
      anyBackupReport: reported.size > 0,
    };
    const out: { instance: PlacedInstance; result: InstanceHealth; offline: boolean }[] = [];
    // The checks of each set of policies that hold an instance, merged once: most instances share a few sets.
    const merged = new Map<string, Checks | undefined>();
    const placements = deps.placements();
    for (const instance of registryNow()) {
      if (only && !only.has(instance.vmid)) continue;
      const placed = placements.get(instance.vmid);
      let key = '';
      for (let n = 0; n < scopes.length; n++) {
        const s = scopes[n]!;
        if (s.stack !== undefined ? s.stack === instance.stack : s.vmids!.has(instance.vmid)) key += `${n},`;
      }
      if (key === '') continue;
      if (!merged.has(key)) merged.set(key, mergeChecks(key.split(',').filter(Boolean).map((n) => scopes[Number(n)]!.checks)));
      const checks = merged.get(key);
      if (!checks) continue;
      const facts: InstanceFacts = {
        vmid: instance.vmid,
        tailscale: instance.tailscale,
        tailscale_ip: instance.tailscale_ip,
        patchmon: instance.patchmon,
        semaphore: instance.semaphore,
        guest_status: placed?.guest_status ?? null,
        host: placed ? (hosts.get(placed.host.id) ?? null) : null,
        backup: newest.get(instance.vmid),
      };
      out.push({ instance, result: { vmid: instance.vmid, name: instance.name, host: placed?.host ?? null, checks: checkInstance(facts, checks, fleet, now) }, offline: facts.host !== null && !facts.host.online });
    }
    return out;
  }

  const rank = (i: InstanceHealth) => {
    const results = Object.values(i.checks).map((c) => c.result);
    return results.includes('fail') ? 0 : results.includes('unknown') ? 1 : 2;
  };

  return {
    ready,
    /** Waits for a read of the registry going on, before the database closes. */
    async close(): Promise<void> {
      await reading?.catch(() => undefined);
    },

    /** What changes the checks besides reports and policies: hosts going offline or coming back, instances changing. */
    start(): void {
      ctx.bus.on('instance.created', ({ instance }) => instancesChanged((rows) => rows.set(instance.vmid, instance)));
      ctx.bus.on('instance.updated', ({ instance, previous_vmid }) => instancesChanged((rows) => (rows.delete(previous_vmid), rows.set(instance.vmid, instance))));
      ctx.bus.on('instance.deleted', ({ vmid }) => instancesChanged((rows) => rows.delete(vmid)));
      // An import replaced the registry: read again, a page at a time (`ready`).
      ctx.bus.on('backup.imported', () => {
        imports++;
        registry = undefined;
        inVmidOrder = undefined;
        changed();
        void ready().catch((err: unknown) => ctx.logger.error({ err: { message: (err as Error).message } }, 'fleet health: reading the registry failed'));
      });
      // host.status is also told for a heartbeat that changed nothing of it: only a new status counts.
      const statuses = new Map<number, string>();
      ctx.bus.on('host.status', (host) => {
        if (statuses.get(host.id) !== host.status) changed();
        statuses.set(host.id, host.status);
      });
    },


    /** POST /api/agent/backups: the host's report, replacing its last one; the newest BACKUPS_PER_GUEST of each guest are kept. */
    report(hostId: number, body: BackupReport): void {
      const byVolid = new Map(body.backups.map((b) => [b.volid, b]));
      const perGuest = new Map<number, number>();
      const backups = [...byVolid.values()]
        .sort((a, b) => b.ctime - a.ctime || (a.volid < b.volid ? -1 : 1))
        .filter((b) => {
          const n = (perGuest.get(b.vmid) ?? 0) + 1;
          perGuest.set(b.vmid, n);
          return n <= BACKUPS_PER_GUEST;
        });
      const jobs = [...new Map(body.jobs.map((j) => [j.id, j])).values()];
      reportTx(hostId, { jobs, backups }, ctx.clock.now());
    },

    /** GET /api/instances/:vmid/backups: newest first, one entry per volume however many hosts listed it. */
    backupsOf(vmid: number): GuestBackup[] {
      if (!deps.instances.exists(vmid)) throw notFound('instance not found');
      const names = new Map(deps.hosts.facts().map((h) => [h.id, h.hostname]));
      const seen = new Set<string>();
      const out: GuestBackup[] = [];
      for (const b of repo.backupsOf(vmid)) {
        if (seen.has(b.volid)) continue;
        seen.add(b.volid);
        out.push({ vmid: b.vmid, volid: b.volid, ctime: b.ctime, size: b.size, storage: b.storage, protected: b.protected === 1, verified: b.verified, host: { id: b.host_id, name: names.get(b.host_id) ?? String(b.host_id) } });
      }
      return out;
    },

    policies: (): Policy[] => repo.policies(),

    /** PUT /api/policies: every collection a scope names must exist (400 naming the field). */
    putPolicies(policies: PoliciesInput): Policy[] {
      const errors = policies.flatMap((p, i) => {
        if (!('collection_id' in p.scope)) return [];
        try {
          collectionVmids(p.scope.collection_id);
          return [];
        } catch (err) {
          if (err instanceof HttpError && err.status === 404) return [{ field: `${i}.scope.collection_id`, message: `no collection has id ${p.scope.collection_id}` }];
          throw err;
        }
      });
      if (errors.length) throw validationFailed(errors);
      return putTx(policies);
    },

    /** GET /api/fleet-health */
    health(query: FleetHealthQuery): FleetHealth {
      const now = ctx.clock.now();
      const only = query.collection_id === undefined ? undefined : new Set(collectionVmids(query.collection_id));
      const all = evaluate(now, only).map((e) => e.result);
      const summary: FleetHealth['summary'] = {};
      for (const i of all) {
        for (const name of CHECKS) {
          const c = i.checks[name];
          if (!c) continue;
          const row = (summary[name] ??= { pass: 0, fail: 0, unknown: 0 });
          row[c.result]++;
        }
      }
      const ranked = all.map((i) => ({ i, rank: rank(i) })).sort((a, b) => a.rank - b.rank || a.i.vmid - b.i.vmid);
      const instances = ranked.filter((r) => !query.failing || r.rank === 0).map((r) => r.i);
      return { checked_at: isoMillis(now), summary, instances };
    },

    /**
     * For the alert rules: instances failing a check now (message: the reasons), and the vmids whose
     * host is offline, whose alerts are held ("alerts follow dependencies").
     */
    policyFailures(now: number): { failing: PolicyFailure[]; held: Set<number> } {
      if (forAlerts && now >= forAlerts.at && now - forAlerts.at < ALERT_CHECKS_MS) return forAlerts.value;
      const failing: PolicyFailure[] = [];
      const held = new Set<number>();
      for (const { instance, result, offline } of evaluate(now)) {
        if (offline) held.add(instance.vmid);
        const failed = CHECKS.filter((c) => result.checks[c]?.result === 'fail');
        if (failed.length) failing.push({ vmid: instance.vmid, name: instance.name, message: failed.map((c) => `${c}: ${result.checks[c]!.reason}`).join('; ') });
      }
      forAlerts = { at: now, value: { failing, held } };
      return forAlerts.value;
    },

    /** For the backup.failed rule: each backup volume whose verification failed, once. */
    failedBackups(): { vmid: number; volid: string; ctime: number }[] {
      const seen = new Set<string>();
      return repo.failedBackups().filter((b) => !seen.has(b.volid) && seen.add(b.volid)).map((b) => ({ vmid: b.vmid, volid: b.volid, ctime: b.ctime }));
    },
  };
}

export type FleetHealthService = ReturnType<typeof createFleetHealth>;
export type { Checks };
