import type { Db } from '../db/database.js';
import { keyOf, timeOf, type Tier } from './keys.js';

const HOST_SPAN = 4 * 2 ** 34;

export type MetricRepo = ReturnType<typeof createMetricRepo>;

/** SQL of the metric store: bucket rows, sealed chunks and the roll-up marks, each addressed by its packed key. */
export function createMetricRepo(db: Db) {
  const s = {
    bucket: db.prepare<[number], Buffer>('SELECT data FROM metric_buckets WHERE key = ?').pluck(),
    putBucket: db.prepare<[number, Buffer]>('INSERT INTO metric_buckets (key, data) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET data = excluded.data'),
    buckets: db.prepare<[number, number], { key: number; data: Buffer }>('SELECT key, data FROM metric_buckets WHERE key >= ? AND key < ? ORDER BY key'),
    firstBucket: db.prepare<[number, number], number>('SELECT key FROM metric_buckets WHERE key >= ? AND key < ? ORDER BY key LIMIT 1').pluck(),
    deleteBuckets: db.prepare<[number, number]>('DELETE FROM metric_buckets WHERE key >= ? AND key < ?'),
    chunk: db.prepare<[number], Buffer>('SELECT data FROM metric_chunks WHERE key = ?').pluck(),
    putChunk: db.prepare<[number, Buffer]>('INSERT INTO metric_chunks (key, data) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET data = excluded.data'),
    chunks: db.prepare<[number, number], { key: number; data: Buffer }>('SELECT key, data FROM metric_chunks WHERE key >= ? AND key < ? ORDER BY key'),
    firstChunk: db.prepare<[number, number], number>('SELECT key FROM metric_chunks WHERE key >= ? AND key < ? ORDER BY key LIMIT 1').pluck(),
    deleteChunks: db.prepare<[number, number]>('DELETE FROM metric_chunks WHERE key >= ? AND key < ?'),
    doneUntil: db.prepare<[number, number], number>('SELECT done_until FROM metric_rollups WHERE host_id = ? AND tier = ?').pluck(),
    setDoneUntil: db.prepare<[number, number, number]>(
      'INSERT INTO metric_rollups (host_id, tier, done_until) VALUES (?, ?, ?) ON CONFLICT (host_id, tier) DO UPDATE SET done_until = excluded.done_until',
    ),
  };
  const firstIn = (table: 'bucket' | 'chunk', from: number, to: number) => (table === 'bucket' ? s.firstBucket : s.firstChunk).get(from, to);
  const rows = (table: 'bucket' | 'chunk', hostId: number, tier: Tier, from: number, to: number) =>
    (table === 'bucket' ? s.buckets : s.chunks).all(keyOf(hostId, tier, from), keyOf(hostId, tier, to)).map((r) => ({ t: timeOf(r.key), data: r.data }));

  return {
    bucket: (hostId: number, tier: Tier, t: number) => s.bucket.get(keyOf(hostId, tier, t)),
    putBucket: (hostId: number, tier: Tier, t: number, data: Buffer) => void s.putBucket.run(keyOf(hostId, tier, t), data),
    /** Bucket rows with from <= t < to, oldest first. */
    buckets: (hostId: number, tier: Tier, from: number, to: number) => rows('bucket', hostId, tier, from, to),
    deleteBuckets: (hostId: number, tier: Tier, from: number, to: number) => void s.deleteBuckets.run(keyOf(hostId, tier, from), keyOf(hostId, tier, to)),
    chunk: (hostId: number, tier: Tier, start: number) => s.chunk.get(keyOf(hostId, tier, start)),
    putChunk: (hostId: number, tier: Tier, start: number, data: Buffer) => void s.putChunk.run(keyOf(hostId, tier, start), data),
    /** Chunks whose start is in [from, to), oldest first. */
    chunks: (hostId: number, tier: Tier, from: number, to: number) => rows('chunk', hostId, tier, from, to),
    deleteChunks: (hostId: number, tier: Tier, from: number, to: number) => void s.deleteChunks.run(keyOf(hostId, tier, from), keyOf(hostId, tier, to)),

    /** The first time at or after `from` (before `to`) that has a bucket row or a chunk of this tier. */
    firstTime(hostId: number, tier: Tier, from: number, to: number, table: 'bucket' | 'chunk'): number | undefined {
      const key = firstIn(table, keyOf(hostId, tier, from), keyOf(hostId, tier, to));
      return key === undefined ? undefined : timeOf(key);
    },

    /** Every host with stored metrics: one index seek per host, not a scan. */
    hosts(): number[] {
      const found = new Set<number>();
      for (const table of ['bucket', 'chunk'] as const) {
        let from = 0;
        for (;;) {
          const key = firstIn(table, from, Number.MAX_SAFE_INTEGER);
          if (key === undefined) break;
          const host = Math.floor(key / HOST_SPAN);
          found.add(host);
          from = (host + 1) * HOST_SPAN;
        }
      }
      return [...found].sort((a, b) => a - b);
    },

    doneUntil: (hostId: number, tier: Tier) => s.doneUntil.get(hostId, tier),
    setDoneUntil: (hostId: number, tier: Tier, t: number) => void s.setDoneUntil.run(hostId, tier, t),
  };
}
