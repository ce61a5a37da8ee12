import type { CheckName, CheckOutcome } from '../contract/fleet.js';
import type { AgentChannel } from '../contract/versions.js';
import type { PolicyInput } from '../contract/inputs/fleet.js';
import type { BackupJob, NewestBackup } from './repo.js';

/** The checks a policy asks for (`backed_up_within_h` is the hours). */
export type Checks = PolicyInput['checks'];

/** What the checks read of an instance's host (its agent's last heartbeat and backup report). Times in ms. */
export interface HostFacts {
  id: number;
  name: string;
  online: boolean;
  last_heartbeat_at: number | null;
  agent_version: string;
  agent_channel: AgentChannel;
  agent_pin: string | null;
  /** The agent its channel offers it now (server/releases/channels.ts): none when pinned or current. */
  offered: string | undefined;
  /** When it last reported its backups, null when never. */
  backups_reported_at: number | null;
  jobs: readonly BackupJob[];
}

/** What the checks read of one instance: the registry's fields and where its guest runs. */
export interface InstanceFacts {
  vmid: number;
  tailscale: number;
  tailscale_ip: string;
  patchmon: number;
  semaphore: number;
  guest_status: string | null;
  host: HostFacts | null;
  backup: NewestBackup | undefined;
}

/** When each sync job last succeeded (ms), null when it never did; and the agent version this server ships. */
export interface FleetFacts {
  tailscale: number | null;
  patchmon: number | null;
  semaphore: number | null;
  /** Some host has reported backups: without any report, no guest can be said to have none. */
  anyBackupReport: boolean;
}

/** A span in the words a reason uses: "45 s", "20 min", "5 h", "3 days". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 90) return `${min} min`;
  const h = Math.round(min / 60);
  if (h < 48) return `${h} h`;
  return `${Math.round(h / 24)} days`;
}

const pass = (reason: string): CheckOutcome => ({ result: 'pass', reason });
const fail = (reason: string): CheckOutcome => ({ result: 'fail', reason });
const unknown = (reason: string): CheckOutcome => ({ result: 'unknown', reason });

/** Why a check that reads the guest's host cannot be told now; undefined when it can. */
function hostMissing(i: InstanceFacts, now: number): CheckOutcome | undefined {
  if (!i.host) return unknown('no agent reports this guest');
  if (i.host.online) return undefined;
  // PRODUCT.md: "no heartbeat from its host for 2 h".
  return unknown(i.host.last_heartbeat_at === null ? 'its host has never sent a heartbeat' : `no heartbeat from its host for ${duration(now - i.host.last_heartbeat_at)}`);
}

/** A registry flag a sync job sets: unknown until that job has succeeded once. */
function synced(lastSuccess: number | null, job: string, on: boolean, yes: string, no: string): CheckOutcome {
  if (lastSuccess === null) return unknown(`the ${job} sync has never succeeded`);
  return on ? pass(yes) : fail(no);
}

/** "in backup job X" or why not: disabled jobs do not count, and an "all" job leaves out what it excludes. */
function inBackupJob(i: InstanceFacts, now: number): CheckOutcome {
  const missing = hostMissing(i, now);
  if (missing) return missing;
  const host = i.host!;
  if (host.backups_reported_at === null) return unknown('its host has not reported its backup jobs');
  const covers = (j: BackupJob) => (j.vmids === 'all' ? !j.exclude.includes(i.vmid) : j.vmids.includes(i.vmid));
  const enabled = host.jobs.find((j) => j.enabled && covers(j));
  if (enabled) return pass(`in backup job ${enabled.id} (${enabled.schedule || 'no schedule'})`);
  const disabled = host.jobs.find((j) => !j.enabled && covers(j));
  if (disabled) return fail(`not in any enabled backup job (backup job ${disabled.id} is disabled)`);
  const excluded = host.jobs.find((j) => j.enabled && j.vmids === 'all' && j.exclude.includes(i.vmid));
  if (excluded) return fail(`not in any enabled backup job (excluded from backup job ${excluded.id})`);
  return fail('not in any enabled backup job');
}

function backedUpWithin(i: InstanceFacts, hours: number, fleet: FleetFacts, now: number): CheckOutcome {
  if (i.host) {
    const missing = hostMissing(i, now);
    if (missing) return missing;
  }
  if (!fleet.anyBackupReport) return unknown('no agent has reported backups yet');
  const b = i.backup;
  if (!b) return fail('no backup found');
  const failedNewer = b.newest_verified === 'failed' ? ' (a newer one failed verification)' : '';
  if (b.newest_good === null) return fail('no backup that passed verification (the newest failed it)');
  const age = now - b.newest_good * 1000;
  const words = `last backup ${duration(age)} ago${failedNewer}`;
  return age <= hours * 3_600_000 ? pass(words) : fail(words);
}

/** The host's agent against what its release channel offers it; a pinned host is current on its pin. */
function agentCurrent(h: HostFacts): CheckOutcome {
  if (h.offered !== undefined) return fail(`its host runs agent ${h.agent_version}; ${h.offered} is offered on its ${h.agent_channel} channel`);
  if (h.agent_pin !== null) return pass(`its host runs agent ${h.agent_version}, the version it is pinned to`);
  return pass(`its host runs agent ${h.agent_version}, the newest on its ${h.agent_channel} channel`);
}

/** One instance against the checks its policies ask for, each with its reason in words. */
export function checkInstance(i: InstanceFacts, checks: Checks, fleet: FleetFacts, now: number): Partial<Record<CheckName, CheckOutcome>> {
  const out: Partial<Record<CheckName, CheckOutcome>> = {};
  if (checks.running) {
    const status = i.guest_status;
    out.running = hostMissing(i, now) ?? (status === 'running' ? pass('running') : fail(`guest is ${status || 'not running'}`));
  }
  if (checks.on_tailnet) {
    out.on_tailnet = synced(fleet.tailscale, 'Tailscale', i.tailscale === 1, i.tailscale_ip ? `on the tailnet as ${i.tailscale_ip}` : 'on the tailnet', 'not on the tailnet');
  }
  if (checks.patched) out.patched = synced(fleet.patchmon, 'PatchMon', i.patchmon === 1, 'reports to PatchMon', 'not reporting to PatchMon');
  if (checks.in_automation) out.in_automation = synced(fleet.semaphore, 'Semaphore', i.semaphore === 1, 'in the Semaphore inventory', 'not in the Semaphore inventory');
  if (checks.in_backup_job) out.in_backup_job = inBackupJob(i, now);
  if (checks.backed_up_within_h !== undefined) out.backed_up_within_h = backedUpWithin(i, checks.backed_up_within_h, fleet, now);
  if (checks.agent_current) out.agent_current = hostMissing(i, now) ?? agentCurrent(i.host!);
  return out;
}

/** The checks of every policy whose scope holds the instance, together (the fewest hours of backed_up_within_h). */
export function mergeChecks(policies: readonly Checks[]): Checks | undefined {
  if (policies.length === 0) return undefined;
  const out: Checks = {};
  for (const c of policies) {
    for (const [name, value] of Object.entries(c) as [keyof Checks, true | number | undefined][]) {
      if (value === undefined) continue;
      if (name === 'backed_up_within_h') out.backed_up_within_h = Math.min(out.backed_up_within_h ?? Infinity, value as number);
      else out[name] = true;
    }
  }
  return out;
}
