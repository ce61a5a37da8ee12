import type { Registry } from 'prom-client';
import type { HostMetricsLatest } from '../contract/metrics.js';

/** What the exporter reads of other features, handed in by the composition root (server/services.ts). */
export interface FleetGaugeSources {
  /** Hosts that are not deleted; `up` as the hosts page says online. */
  hosts(): { id: number; hostname: string; up: boolean }[];
  /** Every guest of those hosts as their last heartbeat listed it. */
  guests(): { host_id: number; vmid: number; name: string; type: string; status: string }[];
  instances(): { state: string; stack: string; count: number }[];
  /** Per job, when a run last ended in success (ms), or null. */
  jobLastSuccess(): { job: string; at: number | null }[];
  /** Firing alerts per rule, every rule listed. */
  alertsFiring(): { rule: string; count: number }[];
}

type PromClient = typeof import('prom-client');
let processRegistry: Registry | undefined;

/** The process's default metrics, collected from the first scrape on (they sample the event loop, so not before). */
function processMetrics({ Registry, collectDefaultMetrics }: PromClient): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The Prometheus text of one scrape: the fleet gauges are made in a registry of their own for this
 * request, from one reading of each source, so a scrape is one consistent picture (and a host that
 * went away leaves no stale series behind). Label values are escaped by prom-client as the format
 * says (backslash, double quote, line feed).
 */
export async function scrape(sources: FleetGaugeSources, latest: (hostId: number) => HostMetricsLatest | undefined): Promise<{ contentType: string; text: string }> {
  // Loaded here, not at the top: the chunk that holds prom-client is read on the first scrape only.
  const loaded = await import('prom-client');
  // A CommonJS package: bundled, its exports come as `default`; from node_modules, as named exports too.
  const prom: PromClient = (loaded as unknown as { default?: PromClient }).default ?? loaded;
  const { Gauge, Registry } = prom;
  const registry = new Registry();
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Gauge<L>({ name, help, labelNames, registers: [registry] });

  const hostUp = gauge('homefleet_host_up', '1 when the host heartbeated within 3 intervals, else 0.', ['host']);
  const hostCpu = gauge('homefleet_host_cpu_ratio', 'Host CPU use over its last heartbeat interval, 0 to 1.', ['host']);
  const hostMemory = gauge('homefleet_host_memory_bytes', 'Host memory: used and total.', ['host', 'kind']);
  const hostDisk = gauge('homefleet_host_disk_bytes', 'Host root filesystem: used and total.', ['host', 'kind']);
  const hostLoad = gauge('homefleet_host_load1', 'Host load average over one minute.', ['host']);
  const guestLabels = ['host', 'vmid', 'name', 'type'] as const;
  const guestRunning = gauge('homefleet_guest_running', '1 when the guest was running at the last heartbeat, else 0.', guestLabels);
  const guestCpu = gauge('homefleet_guest_cpu_ratio', 'Guest CPU use, 0 to 1 of its cores.', guestLabels);
  const guestMemory = gauge('homefleet_guest_memory_bytes', 'Guest memory in use.', guestLabels);
  const instances = gauge('homefleet_instances', 'Registry instances by state and stack.', ['state', 'stack']);
  const jobSuccess = gauge('homefleet_job_last_success_timestamp_seconds', 'When a run of the job last ended in success (Unix seconds).', ['job']);
  const alerts = gauge('homefleet_alerts_firing', 'Alerts firing now, per rule.', ['rule']);

  const names = new Map<number, string>();
  const guestValues = new Map<number, Map<number, { cpu: number | null; mem: number | null }>>();
  for (const host of sources.hosts()) {
    names.set(host.id, host.hostname);
    hostUp.set({ host: host.hostname }, host.up ? 1 : 0);
    const reported = latest(host.id);
    guestValues.set(host.id, new Map((reported?.guests ?? []).map((g) => [g.vmid, g])));
    const values = reported?.host;
    if (!values) continue;
    if (values.cpu !== undefined) hostCpu.set({ host: host.hostname }, values.cpu);
    if (values.mem_used !== undefined) hostMemory.set({ host: host.hostname, kind: 'used' }, values.mem_used);
    if (values.mem_total !== undefined) hostMemory.set({ host: host.hostname, kind: 'total' }, values.mem_total);
    if (values.disk_used !== undefined) hostDisk.set({ host: host.hostname, kind: 'used' }, values.disk_used);
    if (values.disk_total !== undefined) hostDisk.set({ host: host.hostname, kind: 'total' }, values.disk_total);
    if (values.load1 !== undefined) hostLoad.set({ host: host.hostname }, values.load1);
  }
  for (const guest of sources.guests()) {
    const host = names.get(guest.host_id);
    if (host === undefined) continue;
    const labels = { host, vmid: String(guest.vmid), name: guest.name, type: guest.type };
    guestRunning.set(labels, guest.status === 'running' ? 1 : 0);
    const values = guestValues.get(guest.host_id)?.get(guest.vmid);
    if (values?.cpu != null) guestCpu.set(labels, values.cpu);
    if (values?.mem != null) guestMemory.set(labels, values.mem);
  }
  for (const row of sources.instances()) instances.set({ state: row.state, stack: row.stack }, row.count);
  for (const row of sources.jobLastSuccess()) if (row.at !== null) jobSuccess.set({ job: row.job }, row.at / 1000);
  for (const row of sources.alertsFiring()) alerts.set({ rule: row.rule }, row.count);

  const merged = Registry.merge([processMetrics(prom), registry]);
  return { contentType: merged.contentType, text: await merged.metrics() };
}
