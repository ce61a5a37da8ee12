import { describe, expect, it } from 'vitest';
import { useMetricsService } from '../../test/helpers/metrics.js';
import { defaultConfig } from '../config.js';
import { createContext, type AppContext } from '../context.js';
import { openDatabase } from '../db/database.js';
import { createLogger } from '../logger.js';
import type { MetricsReport } from './ingest.js';
import { createMetricsService, type MetricsService } from './service.js';

// A heartbeat's numbers are made ready before its transaction (prepare), and the bucket the
// store last wrote is folded into without reading it back: neither may change what is stored.

const START = Date.parse('2026-11-01T00:00:00Z');

const f = useMetricsService(START);

const report = (cpu: number, netRx?: number, guests = 3): MetricsReport => ({
  metrics: { cpu, mem_used: 1e9 + cpu * 1e9, mem_total: 8e9, ...(netRx === undefined ? {} : { net_rx_bytes: netRx }) },
  guests: Array.from({ length: guests }, (_, g) => ({ vmid: 100 + g, cpu: cpu / (g + 1), mem: 1e8 * (g + 1) + cpu })),
});
const bucketRows = () => f.ctx.db.prepare('SELECT key, data FROM metric_buckets ORDER BY key').all();
const cpuNow = () => f.metrics.hostSeries(1, { from: START, to: START + 60_000, series: ['cpu'] }).series.cpu;

describe('heartbeat numbers folded into the 1-minute bucket', () => {
  it('stores the same bytes prepared ahead (a slice of guests per turn) and folded into the bucket kept as reading the row back each time', async () => {
    // 2,500 guests: several turns of preparing.
    const reports = [0.1, 0.37, 0.2, 0.9, 0.55, 0.123456].map((cpu) => report(cpu, undefined, 2_500));
    for (const [i, r] of reports.entries()) {
      // A store of its own each time: nothing kept, the row is decoded.
      const fresh = createMetricsService(f.ctx);
      f.ctx.transaction(() => fresh.record(1, r, START + i * 10_000))();
    }
    const decodedEachTime = bucketRows();

    f.ctx.db.exec('DELETE FROM metric_buckets');
    for (const [i, r] of reports.entries()) {
      const commit = await f.metrics.prepare(1, r, START + i * 10_000);
      f.ctx.transaction(commit)();
    }
    expect(bucketRows()).toEqual(decodedEachTime);
  });

  it('a heartbeat whose transaction rolled back leaves no sample behind, also in the bucket the next one folds into', () => {
    const record = f.ctx.transaction((cpu: number, fail: boolean) => {
      f.metrics.record(1, report(cpu), f.clock.now());
      if (fail) throw new Error('a later step of the heartbeat failed');
    });
    record(0.2, false);
    expect(() => record(0.8, true)).toThrow('a later step');
    record(0.5, false);
    expect(cpuNow()).toEqual([[START / 1000, 0.35, 0.5]]);
  });

  it('two heartbeats of one host prepared together: the second one rates its counters against the first', async () => {
    f.metrics.record(1, report(0.1, 0), START);
    const first = await f.metrics.prepare(1, report(0.1, 10_000), START + 10_000);
    const second = await f.metrics.prepare(1, report(0.1, 40_000), START + 20_000);
    f.ctx.transaction(first)();
    expect(f.metrics.latest(1)!.host.net_rx).toBe(1_000);
    f.ctx.transaction(second)();
    expect(f.metrics.latest(1)!.host.net_rx).toBe(3_000);
  });
});
