import type { Alert, AlertRuleName, AlertStatus, AlertSubject, Severity } from '../contract/alerts.js';
import type { Db } from '../db/database.js';
import { isoMillis } from '../time.js';

interface AlertRow {
  id: number;
  rule: AlertRuleName;
  severity: Severity;
  subject_type: string;
  subject_id: string;
  subject_name: string;
  status: AlertStatus;
  started_at: number;
  resolved_at: number | null;
  value: number | null;
  message: string;
}

export const presentAlert = (r: AlertRow): Alert => ({
  id: r.id,
  rule: r.rule,
  severity: r.severity,
  subject: { type: r.subject_type, id: r.subject_id, name: r.subject_name },
  status: r.status,
  started_at: isoMillis(r.started_at),
  resolved_at: r.resolved_at === null ? null : isoMillis(r.resolved_at),
  value: r.value,
  message: r.message,
});

/** Resolved alerts kept: the newest this many. */
const KEEP_RESOLVED = 10_000;

export type AlertRepo = ReturnType<typeof createAlertRepo>;

export function createAlertRepo(db: Db) {
  const s = {
    settings: db.prepare<[], { rule: string; settings: string }>('SELECT rule, settings FROM alert_rules'),
    putSettings: db.prepare<[string, string]>('INSERT INTO alert_rules (rule, settings) VALUES (?, ?) ON CONFLICT (rule) DO UPDATE SET settings = excluded.settings'),
    firing: db.prepare<[string], AlertRow>("SELECT * FROM alerts WHERE rule = ? AND status = 'firing'"),
    firingCounts: db.prepare<[], { rule: string; count: number }>("SELECT rule, count(*) AS count FROM alerts WHERE status = 'firing' GROUP BY rule"),
    insert: db.prepare<[string, string, string, string, string, number, number | null, string], AlertRow>(
      "INSERT INTO alerts (rule, severity, subject_type, subject_id, subject_name, status, started_at, value, message) VALUES (?, ?, ?, ?, ?, 'firing', ?, ?, ?) RETURNING *",
    ),
    resolve: db.prepare<[number, number], AlertRow>("UPDATE alerts SET status = 'resolved', resolved_at = ? WHERE id = ? AND status = 'firing' RETURNING *"),
    list: db.prepare<{ status: string | null; limit: number }, AlertRow>(
      "SELECT * FROM alerts WHERE @status IS NULL OR status = @status ORDER BY status = 'firing' DESC, id DESC LIMIT @limit",
    ),
    conditions: db.prepare<[string], { subject_type: string; subject_id: string; since: number }>('SELECT subject_type, subject_id, since FROM alert_conditions WHERE rule = ?'),
    addCondition: db.prepare<[string, string, string, number]>('INSERT OR IGNORE INTO alert_conditions (rule, subject_type, subject_id, since) VALUES (?, ?, ?, ?)'),
    dropCondition: db.prepare<[string, string, string]>('DELETE FROM alert_conditions WHERE rule = ? AND subject_type = ? AND subject_id = ?'),
    prune: db.prepare<[number]>(
      "DELETE FROM alerts WHERE status = 'resolved' AND id < (SELECT id FROM alerts WHERE status = 'resolved' ORDER BY id DESC LIMIT 1 OFFSET ?)",
    ),
  };
  const key = (subject: Pick<AlertSubject, 'type' | 'id'>) => `${subject.type}\u0000${subject.id}`;

  return {
    key,
    settings: () => new Map(s.settings.all().map((r) => [r.rule, JSON.parse(r.settings) as Record<string, unknown>])),
    putSettings: (rule: string, settings: object) => void s.putSettings.run(rule, JSON.stringify(settings)),
    firing: (rule: string) => new Map(s.firing.all(rule).map((r) => [key({ type: r.subject_type, id: r.subject_id }), r])),
    firingCounts: () => s.firingCounts.all(),
    fire: (rule: string, severity: Severity, subject: AlertSubject, now: number, value: number | null, message: string) =>
      presentAlert(s.insert.get(rule, severity, subject.type, subject.id, subject.name, now, value, message)!),
    resolve: (id: number, now: number) => {
      const row = s.resolve.get(now, id);
      return row && presentAlert(row);
    },
    list: (status: AlertStatus | undefined, limit: number) => s.list.all({ status: status ?? null, limit }).map(presentAlert),
    conditions: (rule: string) => new Map(s.conditions.all(rule).map((r) => [key({ type: r.subject_type, id: r.subject_id }), r])),
    addCondition: (rule: string, subject: AlertSubject, since: number) => void s.addCondition.run(rule, subject.type, subject.id, since),
    dropCondition: (rule: string, type: string, id: string) => void s.dropCondition.run(rule, type, id),
    prune: () => void s.prune.run(KEEP_RESOLVED),
  };
}
