import type { TelemetryEvent } from '../contract/telemetry.js';
import type { Db } from '../db/database.js';

export const KEEP_EVENTS = 10_000;

export function createTelemetryRepo(db: Db) {
  const insert = db.prepare<[string, string], void>('INSERT INTO telemetry_events (received_at, payload) VALUES (?, ?)');
  // Keeps the newest KEEP_EVENTS rows: everything at or below the id of the first row past the limit goes.
  const prune = db.prepare<[number], void>(
    'DELETE FROM telemetry_events WHERE id <= (SELECT id FROM telemetry_events ORDER BY id DESC LIMIT 1 OFFSET ?)',
  );
  const page = db.prepare<[number, number], { id: number; received_at: string; payload: string }>(
    'SELECT id, received_at, payload FROM telemetry_events WHERE id < ? ORDER BY id DESC LIMIT ?',
  );
  return {
    /** Stores the events and trims to the newest KEEP_EVENTS, in one transaction. */
    add: db.transaction((receivedAt: string, events: readonly unknown[]) => {
      for (const event of events) insert.run(receivedAt, JSON.stringify(event));
      prune.run(KEEP_EVENTS);
    }),
    list(limit: number, before = Number.MAX_SAFE_INTEGER): TelemetryEvent[] {
      return page.all(before, limit).map((row) => ({ id: row.id, received_at: row.received_at, event: JSON.parse(row.payload) }));
    },
  };
}

export type TelemetryRepo = ReturnType<typeof createTelemetryRepo>;
