import { createAlertService, type AlertsOptions } from '../alerts/service.js';
import type { AlertFacts, GuestSample } from '../alerts/rules.js';
import type { AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Guest, HostBrief } from '../contract/hosts.js';
import type { JobView } from '../contract/jobs.js';
import type { Instance } from '../contract/registry.js';
import type { FleetGaugeSources } from '../metrics/prometheus.js';
import { createMetricsService, type MetricsOptions } from '../metrics/service.js';
import type { DeliveryOptions } from '../notifications/queue.js';
import { createNotificationService } from '../notifications/service.js';

export interface MonitoringOptions {
  metrics?: MetricsOptions;
  alerts?: AlertsOptions;
  notifications?: DeliveryOptions;
}

/**
 * What monitoring reads of the other features, each through its own service (server/services.ts
 * hands them in): the hosts and their guests, the registry, the jobs and the snapshots.
 */
export interface MonitoringDeps {
  audit: AuditLog;
  /** `briefs`: the hosts without their guest and drift counts, which no rule reads. */
  hosts: { briefs(): HostBrief[]; repo: { guestsOf(hostId: number): Guest[]; guestSample(hostId: number, limit: number): GuestSample; guestsNotRunning(hostId: number): Pick<Guest, 'vmid' | 'name' | 'status'>[] }; isMuted(hostId: number): boolean };
  instances: {
    list(query: { sort: 'vmid'; descending: false }): Pick<Instance, 'vmid' | 'state' | 'stack'>[];
    byVmids(vmids: readonly number[]): Pick<Instance, 'vmid' | 'state'>[];
  };
  jobs: { list(): JobView[]; lastSuccesses(): { key: string; at: string | null }[]; runResult(runId: number): string | undefined };
  snapshots: { lastFailure(): { at: number; message: string } | null };
  /** Fleet health (server/fleet): what fails its policy, and the backups whose verification failed. */
  fleet: Pick<AlertFacts, 'ready' | 'policyFailures' | 'failedBackups'>;
  heartbeatIntervalS: number;
}

/**
 * The metric store, the alert rules and the notification channels, built together, and what they
 * read of the other features (hosts, registry, jobs, snapshots, TLS) handed to them here, so that
 * none of the three imports another feature and this folder imports only them.
 */
export function createMonitoring(ctx: AppContext, deps: MonitoringDeps, options: MonitoringOptions = {}) {
  const { hosts, instances, jobs, snapshots } = deps;
  const metrics = createMetricsService(ctx, options.metrics);
  const notifications = createNotificationService(ctx, { audit: deps.audit, isMuted: hosts.isMuted }, options.notifications);

  const liveHosts = () => hosts.briefs().filter((h) => h.status === 'online' || h.status === 'offline');

  const facts: AlertFacts = {
    heartbeatIntervalS: deps.heartbeatIntervalS,
    hosts: () =>
      liveHosts().map((h) => ({
        id: h.id,
        hostname: h.hostname,
        online: h.status === 'online',
        last_heartbeat_at: h.last_heartbeat_at === null ? null : Date.parse(h.last_heartbeat_at),
        upgrade_available: h.upgrade_available,
        agent_version: h.agent_version,
      })),
    guests() {
      // Read every few seconds: all of a 10,000-guest host's rows were ~50 ms each time.
      const down = liveHosts().flatMap((h) =>
        hosts.repo.guestsNotRunning(h.id).map((g) => ({ host_id: h.id, hostname: h.hostname, vmid: g.vmid, name: g.name, status: g.status })),
      );
      if (down.length === 0) return [];
      // The states of those guests' instances, in one read: a lookup per guest (a thrown 404 for each
      // unregistered one) took seconds a pass, and the registry's whole list (10,000 instances) a
      // quarter of a busy server's CPU, read every 5 s whether or not any guest was down.
      const states = new Map(instances.byVmids([...new Set(down.map((g) => g.vmid))]).map((i) => [i.vmid, i.state]));
      return down.map((g) => ({ ...g, instance_state: states.get(g.vmid) ?? null }));
    },
    hostMetrics(hostId) {
      const latest = metrics.latest(hostId);
      return latest && { at: Date.parse(latest.at), ...latest.host };
    },
    jobs: () =>
      jobs.list().map((j) => ({
        key: j.key,
        name: j.name,
        last_status: j.last_status,
        last_run_at: j.last_run_at === null ? null : Date.parse(j.last_run_at),
        // Only a failed run's text is told (job.failed).
        result: j.last_run_id === null || j.last_status !== 'error' ? '' : (jobs.runResult(j.last_run_id) ?? ''),
      })),
    hostGuests: (hostId, limit) => hosts.repo.guestSample(hostId, limit),
    snapshotFailure: () => snapshots.lastFailure(),
    certificate: () => (ctx.tls?.notAfter ? { notAfter: ctx.tls.notAfter } : null),
    ready: () => deps.fleet.ready(),
    policyFailures: (now) => deps.fleet.policyFailures(now),
    failedBackups: () => deps.fleet.failedBackups(),
  };

  const alerts = createAlertService(ctx, { facts, audit: deps.audit, onChange: (alert, change) => notifications.onAlert(alert, change) }, options.alerts);

  const gauges: FleetGaugeSources = {
    hosts: () => liveHosts().map((h) => ({ id: h.id, hostname: h.hostname, up: h.status === 'online' })),
    guests: () => liveHosts().flatMap((h) => hosts.repo.guestsOf(h.id).map((g) => ({ host_id: h.id, ...g }))),
    instances() {
      const counts = new Map<string, { state: string; stack: string; count: number }>();
      for (const i of instances.list({ sort: 'vmid', descending: false })) {
        const key = `${i.state}\u0000${i.stack}`;
        const row = counts.get(key) ?? { state: i.state, stack: i.stack, count: 0 };
        row.count++;
        counts.set(key, row);
      }
      return [...counts.values()];
    },
    jobLastSuccess: () => jobs.lastSuccesses().map((r) => ({ job: r.key, at: r.at === null ? null : Date.parse(r.at) })),
    alertsFiring: () => alerts.firingCounts(),
  };

  return {
    metrics,
    alerts,
    notifications,
    gauges,
    start(): void {
      metrics.start();
      alerts.start();
      notifications.start();
    },
    /** After the task runner has stopped: the deliveries and the roll-up still going on. */
    async close(): Promise<void> {
      await notifications.close();
      await metrics.close();
    },
  };
}

export type Monitoring = ReturnType<typeof createMonitoring>;
