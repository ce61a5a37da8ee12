import type { InstanceHost } from './registry.js';
import type { BackupVerification, PolicyInput } from './inputs/fleet.js';

export type { BackupVerification, PolicyInput } from './inputs/fleet.js';

/** The checks a policy can ask for (PRODUCT.md "Fleet health: policies across every source"), in the order the page shows them. */
export const CHECKS = ['running', 'on_tailnet', 'patched', 'in_automation', 'in_backup_job', 'backed_up_within_h', 'agent_current'] as const;
export type CheckName = (typeof CHECKS)[number];

export type CheckResult = 'pass' | 'fail' | 'unknown';

/** One cell of the fleet-health table: the result and why, in words ("last backup 3 days ago"). */
export interface CheckOutcome {
  result: CheckResult;
  reason: string;
}

/** GET /api/fleet-health: one instance a policy covers, with the checks its policies ask for. */
export interface InstanceHealth {
  vmid: number;
  name: string;
  /** The host whose agent reports its guest, else null. */
  host: InstanceHost | null;
  checks: Partial<Record<CheckName, CheckOutcome>>;
}

export interface FleetHealth {
  /** ISO 8601 UTC, milliseconds: when the checks were made. */
  checked_at: string;
  /** Per check, how many instances pass, fail or cannot be told (over the instances of the collection asked for, before `failing`). */
  summary: Partial<Record<CheckName, { pass: number; fail: number; unknown: number }>>;
  /** Failing first (then unknown, then passing), each group by vmid. */
  instances: InstanceHealth[];
}

/** GET /api/policies: the policies, each a scope and the checks its instances must pass. */
export type Policy = PolicyInput;

/** GET /api/instances/:vmid/backups: one backup volume of the guest, as an agent last reported it. */
export interface GuestBackup {
  vmid: number;
  volid: string;
  /** Unix seconds: when the backup was made. */
  ctime: number;
  size: number;
  storage: string;
  protected: boolean;
  /** The storage's verification of it (Proxmox Backup Server), null when it has none. */
  verified: BackupVerification;
  /** The host whose agent reported it last. */
  host: InstanceHost;
}
