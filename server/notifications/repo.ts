import type { Severity } from '../contract/alerts.js';
import type { QuietHours } from '../contract/inputs/notifications.js';
import type { Channel, ChannelType, Delivery, DeliveryEvent, DeliveryStatus } from '../contract/notifications.js';
import type { Db } from '../db/database.js';
import { isoMillis } from '../time.js';

export interface ChannelRow {
  id: number;
  name: string;
  type: ChannelType;
  config: string;
  rules: string;
  min_severity: Severity;
  quiet_hours: string | null;
  created_at: number;
  updated_at: number;
}

/** A channel as the service works with it: the API's shape with secrets in clear and times in ms. */
export type StoredChannel = Omit<Channel, 'created_at' | 'updated_at'> & { created_at: number; updated_at: number };

interface DeliveryRow {
  id: number;
  channel_id: number | null;
  channel_name: string;
  alert_id: number | null;
  event: DeliveryEvent;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  error: string | null;
  created_at: number;
  next_attempt_at: number | null;
  finished_at: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : isoMillis(ms));

const parseChannel = (r: ChannelRow): StoredChannel => ({
  ...r,
  config: JSON.parse(r.config) as Record<string, unknown>,
  rules: JSON.parse(r.rules) as StoredChannel['rules'],
  quiet_hours: r.quiet_hours === null ? null : (JSON.parse(r.quiet_hours) as QuietHours),
});

export const presentDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  channel_id: r.channel_id,
  channel_name: r.channel_name,
  alert_id: r.alert_id,
  event: r.event,
  status: r.status,
  attempts: r.attempts,
  error: r.error,
  created_at: isoMillis(r.created_at),
  next_attempt_at: r.status === 'pending' ? iso(r.next_attempt_at) : null,
  finished_at: iso(r.finished_at),
});

/** Deliveries kept in the log: the newest this many (pending ones always). */
const KEEP_DELIVERIES = 10_000;

export type NotificationRepo = ReturnType<typeof createNotificationRepo>;

export function createNotificationRepo(db: Db) {
  const s = {
    channels: db.prepare<[], ChannelRow>('SELECT * FROM notification_channels ORDER BY name COLLATE NOCASE, id'),
    channel: db.prepare<[number], ChannelRow>('SELECT * FROM notification_channels WHERE id = ?'),
    insertChannel: db.prepare<[string, string, string, string, string, string | null, number, number]>(
      'INSERT INTO notification_channels (name, type, config, rules, min_severity, quiet_hours, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    updateChannel: db.prepare<[string, string, string, string, string, string | null, number, number]>(
      'UPDATE notification_channels SET name = ?, type = ?, config = ?, rules = ?, min_severity = ?, quiet_hours = ?, updated_at = ? WHERE id = ?',
    ),
    deleteChannel: db.prepare<[number]>('DELETE FROM notification_channels WHERE id = ?'),
    insertDelivery: db.prepare<[number | null, string, number | null, string, string, string, string | null, number, number | null, number | null]>(
      `INSERT INTO notification_deliveries (channel_id, channel_name, alert_id, event, payload, status, error, created_at, next_attempt_at, finished_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertTest: db.prepare<[number, string, string, string | null, number, number]>(
      `INSERT INTO notification_deliveries (channel_id, channel_name, alert_id, event, payload, status, attempts, error, created_at, finished_at)
       VALUES (?, ?, NULL, 'test', 'null', ?, 1, ?, ?, ?)`,
    ),
    due: db.prepare<[number, number], DeliveryRow>("SELECT * FROM notification_deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?"),
    attempted: db.prepare<[string, number, string | null, number | null, number | null, number]>(
      "UPDATE notification_deliveries SET status = ?, attempts = ?, error = ?, next_attempt_at = ?, finished_at = ? WHERE id = ? AND status = 'pending'",
    ),
    list: db.prepare<{ channel: number | null; limit: number }, DeliveryRow>(
      'SELECT * FROM notification_deliveries WHERE @channel IS NULL OR channel_id = @channel ORDER BY id DESC LIMIT @limit',
    ),
    prune: db.prepare<[number]>(
      "DELETE FROM notification_deliveries WHERE status != 'pending' AND id < (SELECT id FROM notification_deliveries ORDER BY id DESC LIMIT 1 OFFSET ?)",
    ),
  };

  return {
    channels: () => s.channels.all().map(parseChannel),
    channel: (id: number) => {
      const row = s.channel.get(id);
      return row && parseChannel(row);
    },
    insertChannel: (c: Omit<StoredChannel, 'id' | 'created_at' | 'updated_at'>, now: number) =>
      Number(s.insertChannel.run(c.name, c.type, JSON.stringify(c.config), JSON.stringify(c.rules), c.min_severity, c.quiet_hours ? JSON.stringify(c.quiet_hours) : null, now, now).lastInsertRowid),
    updateChannel: (id: number, c: Omit<StoredChannel, 'id' | 'created_at' | 'updated_at'>, now: number) =>
      void s.updateChannel.run(c.name, c.type, JSON.stringify(c.config), JSON.stringify(c.rules), c.min_severity, c.quiet_hours ? JSON.stringify(c.quiet_hours) : null, now, id),
    deleteChannel: (id: number) => void s.deleteChannel.run(id),

    /** A pending delivery (due at `now`), or a finished one (`suppressed`) with its reason. */
    insertDelivery(d: { channel: StoredChannel; alertId: number | null; event: DeliveryEvent; payload: string; now: number; suppressed?: string }): number {
      const pending = d.suppressed === undefined;
      return Number(
        s.insertDelivery.run(d.channel.id, d.channel.name, d.alertId, d.event, d.payload, pending ? 'pending' : 'suppressed', d.suppressed ?? null, d.now, pending ? d.now : null, pending ? null : d.now)
          .lastInsertRowid,
      );
    },
    /** A test message's one attempt, finished as it is recorded. */
    insertTest(channel: StoredChannel, error: string | null, now: number): number {
      return Number(s.insertTest.run(channel.id, channel.name, error === null ? 'sent' : 'failed', error, now, now).lastInsertRowid);
    },
    due: (now: number, limit: number) => s.due.all(now, limit),
    /** Records an attempt: pending again (with when), or finished (sent, failed). */
    attempted: (id: number, status: 'pending' | 'sent' | 'failed', attempts: number, error: string | null, next: number | null, now: number) =>
      void s.attempted.run(status, attempts, error, status === 'pending' ? next : null, status === 'pending' ? null : now, id),
    list: (limit: number, channel?: number) => s.list.all({ channel: channel ?? null, limit }).map(presentDelivery),
    prune: () => void s.prune.run(KEEP_DELIVERIES),
  };
}
