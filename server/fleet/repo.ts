import type { Db } from '../db/database.js';
import type { BackupReport, PolicyInput } from '../contract/inputs/fleet.js';
import type { BackupVerification } from '../contract/fleet.js';

/** A backup job as a host reported it, its guests read out of the stored JSON. */
export interface BackupJob {
  host_id: number;
  id: string;
  enabled: boolean;
  schedule: string;
  vmids: 'all' | number[];
  exclude: number[];
}

export interface BackupRow {
  host_id: number;
  volid: string;
  vmid: number;
  ctime: number;
  size: number;
  storage: string;
  protected: 0 | 1;
  verified: 'ok' | 'failed' | null;
}

/** The newest backup of a guest, and its newest one whose verification did not fail (Unix seconds). */
export interface NewestBackup {
  newest: number;
  newest_verified: BackupVerification;
  newest_good: number | null;
}

/** SQL of the backup reports and the policies (server/db/migrations/0025). */
export function createFleetRepo(db: Db) {
  const s = {
    deleteJobs: db.prepare<[number]>('DELETE FROM fleet_backup_jobs WHERE host_id = ?'),
    insertJob: db.prepare<[number, string, number, string, string, string, string | null]>(
      'INSERT INTO fleet_backup_jobs (host_id, job_id, enabled, schedule, vmids, exclude, storage) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    deleteBackups: db.prepare<[number]>('DELETE FROM fleet_backups WHERE host_id = ?'),
    insertBackup: db.prepare<[number, string, number, number, number, string, number, string | null]>(
      'INSERT INTO fleet_backups (host_id, volid, vmid, ctime, size, storage, protected, verified) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    reported: db.prepare<[number, number]>(
      'INSERT INTO fleet_backup_reports (host_id, reported_at) VALUES (?, ?) ON CONFLICT (host_id) DO UPDATE SET reported_at = excluded.reported_at',
    ),
    reports: db.prepare<[], { host_id: number; reported_at: number }>('SELECT host_id, reported_at FROM fleet_backup_reports'),
    jobs: db.prepare<[], { host_id: number; job_id: string; enabled: 0 | 1; schedule: string; vmids: string; exclude: string }>(
      'SELECT host_id, job_id, enabled, schedule, vmids, exclude FROM fleet_backup_jobs ORDER BY host_id, job_id',
    ),
    // One row a guest (over every host's copy of a shared storage): its newest backup, that one's
    // verification, and its newest backup that did not fail verification.
    newest: db
      .prepare<[], [number, number, string | null, number | null]>(
        `SELECT vmid, max(ctime), (SELECT b.verified FROM fleet_backups b WHERE b.vmid = f.vmid ORDER BY b.ctime DESC LIMIT 1),
                max(CASE WHEN verified IS 'failed' THEN NULL ELSE ctime END)
           FROM fleet_backups f GROUP BY vmid`,
      )
      .raw(true),
    ofVmid: db.prepare<[number], BackupRow>('SELECT host_id, volid, vmid, ctime, size, storage, protected, verified FROM fleet_backups WHERE vmid = ? ORDER BY ctime DESC, volid, host_id'),
    failed: db.prepare<[], BackupRow>("SELECT host_id, volid, vmid, ctime, size, storage, protected, verified FROM fleet_backups WHERE verified = 'failed' ORDER BY volid, host_id"),
    policies: db.prepare<[], string>('SELECT policies FROM fleet_policies WHERE id = 1').pluck(),
    putPolicies: db.prepare<[string]>('INSERT INTO fleet_policies (id, policies) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET policies = excluded.policies'),
  };

  return {
    /** A host's whole report, replacing what it sent before. Call inside a transaction. */
    replaceReport(hostId: number, report: BackupReport, now: number): void {
      s.deleteJobs.run(hostId);
      for (const j of report.jobs) {
        s.insertJob.run(hostId, j.id, Number(j.enabled), j.schedule, j.vmids === 'all' ? 'all' : JSON.stringify(j.vmids), JSON.stringify(j.exclude), j.storage);
      }
      s.deleteBackups.run(hostId);
      for (const b of report.backups) s.insertBackup.run(hostId, b.volid, b.vmid, b.ctime, b.size, b.storage, Number(b.protected), b.verified);
      s.reported.run(hostId, now);
    },

    /** host id → when it last reported its backups (ms). */
    reports: () => new Map(s.reports.all().map((r) => [r.host_id, r.reported_at])),

    jobs: (): BackupJob[] =>
      s.jobs.all().map((r) => ({
        host_id: r.host_id,
        id: r.job_id,
        enabled: r.enabled === 1,
        schedule: r.schedule,
        vmids: r.vmids === 'all' ? 'all' : (JSON.parse(r.vmids) as number[]),
        exclude: JSON.parse(r.exclude) as number[],
      })),

    newest(): Map<number, NewestBackup> {
      const out = new Map<number, NewestBackup>();
      for (const [vmid, newest, verified, good] of s.newest.all()) out.set(vmid, { newest, newest_verified: verified as BackupVerification, newest_good: good });
      return out;
    },

    backupsOf: (vmid: number) => s.ofVmid.all(vmid),
    failedBackups: () => s.failed.all(),

    policies: (): PolicyInput[] => JSON.parse(s.policies.get() ?? '[]') as PolicyInput[],
    putPolicies: (policies: readonly PolicyInput[]) => void s.putPolicies.run(JSON.stringify(policies)),
  };
}

export type FleetRepo = ReturnType<typeof createFleetRepo>;
