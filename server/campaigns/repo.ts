import type { CampaignCounts, CampaignStatus, CampaignTargetStatus } from '../contract/campaigns.js';
import { TARGET_STATUSES } from '../contract/campaigns.js';
import type { Db } from '../db/database.js';

export interface CampaignRow {
  id: number;
  name: string;
  /** JSON of the target as given. */
  target: string;
  /** JSON of the step as read (defaults applied). */
  step: string;
  wave_size: number;
  pause_s: number;
  max_failures: number;
  respect_maintenance: 0 | 1;
  window_wait_h: number;
  status: CampaignStatus;
  waves: number;
  current_wave: number;
  next_wave_at: number | null;
  failures: number;
  created_by: string | null;
  /** JSON of the creator's Actor. */
  actor: string;
  created_at: number;
  finished_at: number | null;
}

export interface TargetRow {
  campaign_id: number;
  seq: number;
  wave: number;
  host_id: number | null;
  vmid: number | null;
  name: string;
  status: CampaignTargetStatus;
  reason: string | null;
  operation_id: string | null;
  waiting_since: number | null;
  started_at: number | null;
  finished_at: number | null;
}

export type NewCampaign = Omit<CampaignRow, 'id' | 'current_wave' | 'next_wave_at' | 'failures' | 'finished_at'>;
export type NewTarget = Pick<TargetRow, 'seq' | 'wave' | 'host_id' | 'vmid' | 'name' | 'status' | 'reason'>;

const TARGET_COLUMNS = 'campaign_id, seq, wave, host_id, vmid, name, status, reason, operation_id, waiting_since, started_at, finished_at';

export type CampaignRepo = ReturnType<typeof createCampaignRepo>;

/** SQL of campaigns and their frozen targets (server/db/migrations/0023). */
export function createCampaignRepo(db: Db) {
  const s = {
    insert: db.prepare<NewCampaign>(
      `INSERT INTO campaigns (name, target, step, wave_size, pause_s, max_failures, respect_maintenance, window_wait_h, status, waves, created_by, actor, created_at)
       VALUES (@name, @target, @step, @wave_size, @pause_s, @max_failures, @respect_maintenance, @window_wait_h, @status, @waves, @created_by, @actor, @created_at)`,
    ),
    insertTarget: db.prepare<[number, number, number, number | null, number | null, string, string, string | null]>(
      'INSERT INTO campaign_targets (campaign_id, seq, wave, host_id, vmid, name, status, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    byId: db.prepare<[number], CampaignRow>('SELECT * FROM campaigns WHERE id = ?'),
    list: db.prepare<[number], CampaignRow>('SELECT * FROM campaigns ORDER BY id DESC LIMIT ?'),
    // Campaigns the engine looks at: those that go on, and ended ones whose last operations are still out.
    active: db.prepare<[], number>(
      `SELECT id FROM campaigns WHERE status IN ('running', 'paused')
       UNION SELECT DISTINCT campaign_id FROM campaign_targets WHERE status = 'running' ORDER BY 1`,
    ).pluck(),
    targets: db.prepare<[number], TargetRow>(`SELECT ${TARGET_COLUMNS} FROM campaign_targets WHERE campaign_id = ? ORDER BY seq`),
    targetsOfWave: db.prepare<[number, number], TargetRow>(`SELECT ${TARGET_COLUMNS} FROM campaign_targets WHERE campaign_id = ? AND wave = ? ORDER BY seq`),
    inStatus: db.prepare<[number, string], TargetRow>(`SELECT ${TARGET_COLUMNS} FROM campaign_targets WHERE campaign_id = ? AND status = ? ORDER BY seq`),
    counts: db.prepare<[number], [CampaignTargetStatus, number]>('SELECT status, count(*) FROM campaign_targets WHERE campaign_id = ? GROUP BY status').raw(true),
    campaignOfOperation: db.prepare<[string], number>("SELECT campaign_id FROM campaign_targets WHERE operation_id = ? AND status = 'running'").pluck(),
    // The campaign that has not run this guest (or host) yet, if any.
    holder: db.prepare<[number, number], { id: number; name: string }>(
      `SELECT c.id, c.name FROM campaign_targets t JOIN campaigns c ON c.id = t.campaign_id
        WHERE t.host_id = ? AND ifnull(t.vmid, 0) = ? AND t.status IN ('pending', 'waiting', 'running') LIMIT 1`,
    ),
    // Written to use campaign_targets_open (its WHERE implies the index's).
    waitingOn: db.prepare<[number], number>(
      "SELECT 1 FROM campaign_targets WHERE host_id = ? AND status IN ('pending', 'waiting', 'running') AND status = 'waiting' LIMIT 1",
    ).pluck(),
    setTarget: db.prepare<[string, string | null, string | null, number | null, number | null, number | null, number, number]>(
      `UPDATE campaign_targets SET status = ?, reason = ?, operation_id = ?, waiting_since = ?, started_at = ?, finished_at = ?
        WHERE campaign_id = ? AND seq = ?`,
    ),
    // Every target not yet run ends the same way: skipped or cancelled, with the reason.
    endUnrun: db.prepare<[string, string, number, number]>(
      "UPDATE campaign_targets SET status = ?, reason = ?, finished_at = ? WHERE campaign_id = ? AND status IN ('pending', 'waiting')",
    ),
    setCampaign: db.prepare<[string, number, number | null, number, number | null, number]>(
      'UPDATE campaigns SET status = ?, current_wave = ?, next_wave_at = ?, failures = ?, finished_at = ? WHERE id = ?',
    ),
  };

  return {
    insert(campaign: NewCampaign, targets: readonly NewTarget[]): number {
      const id = Number(s.insert.run(campaign).lastInsertRowid);
      for (const t of targets) s.insertTarget.run(id, t.seq, t.wave, t.host_id, t.vmid, t.name, t.status, t.reason);
      return id;
    },
    byId: (id: number) => s.byId.get(id),
    list: (limit: number) => s.list.all(limit),
    /** Ids of the campaigns the engine has work in. */
    active: () => s.active.all(),
    targets: (id: number) => s.targets.all(id),
    targetsOfWave: (id: number, wave: number) => s.targetsOfWave.all(id, wave),
    inStatus: (id: number, status: CampaignTargetStatus) => s.inStatus.all(id, status),
    counts(id: number): CampaignCounts {
      const counts = Object.fromEntries(TARGET_STATUSES.map((status) => [status, 0])) as CampaignCounts;
      for (const [status, n] of s.counts.all(id)) counts[status] = n;
      return counts;
    },
    /** The campaign whose running target this operation is, if any. */
    campaignOfOperation: (operationId: string) => s.campaignOfOperation.get(operationId),
    /** The campaign that holds this guest (`vmid` null: the host itself) and has not run it yet. */
    holder: (hostId: number, vmid: number | null) => s.holder.get(hostId, vmid ?? 0),
    /** A target of this host waits (offline, locked, outside a window): its heartbeat may have changed that. */
    waitingOn: (hostId: number) => s.waitingOn.get(hostId) !== undefined,
    setTarget: (t: TargetRow) => void s.setTarget.run(t.status, t.reason, t.operation_id, t.waiting_since, t.started_at, t.finished_at, t.campaign_id, t.seq),
    endUnrun: (id: number, status: 'skipped' | 'cancelled', reason: string, now: number) => s.endUnrun.run(status, reason, now, id).changes,
    setCampaign: (c: Pick<CampaignRow, 'id' | 'status' | 'current_wave' | 'next_wave_at' | 'failures' | 'finished_at'>) =>
      void s.setCampaign.run(c.status, c.current_wave, c.next_wave_at, c.failures, c.finished_at, c.id),
  };
}
