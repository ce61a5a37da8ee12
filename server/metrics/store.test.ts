import { describe, expect, it } from 'vitest';
import { useMetricsService } from '../../test/helpers/metrics.js';
import { defaultConfig } from '../config.js';
import { createContext, type AppContext } from '../context.js';
import { openDatabase } from '../db/database.js';
import { createLogger } from '../logger.js';
import { createMetricRepo } from './repo.js';
import { createRollups } from './rollup.js';
import { createMetricsService, type MetricsService } from './service.js';
import { createStoreReader } from './store.js';

const START = Date.parse('2026-11-01T00:00:00Z');
const HOUR = 3_600_000;
const GIB = 2 ** 30;
/** A CPU curve the test can average by hand: the minute of the hour / 100. */
const cpuAt = (ms: number) => new Date(ms).getUTCMinutes() / 100;

const f = useMetricsService(START);

/** Heartbeats every 30 s for `hours`, as the heartbeat route records them (inside a transaction). */
function heartbeats(hours: number, hostId = 1): void {
  const record = f.ctx.transaction((now: number) =>
    f.metrics.record(hostId, { metrics: { cpu: cpuAt(now), mem_used: 4 * GIB, mem_total: 16 * GIB }, guests: [{ vmid: 101, cpu: 0.5, mem: GIB }, { vmid: 102, cpu: 0.1 }] }, now),
  );
  for (let i = 0; i < hours * 120; i++) {
    record(f.clock.now());
    f.clock.advance(30_000);
  }
}

describe('the metric store', () => {
  it('answers an hour at 1-minute resolution, each bucket the average and maximum of its samples', () => {
    heartbeats(1);
    const answer = f.metrics.hostSeries(1, { series: ['cpu', 'mem_used'] });
    expect(answer.step_s).toBe(60);
    expect(answer.series.cpu).toHaveLength(60);
    expect(answer.series.cpu![7]).toEqual([START / 1000 + 7 * 60, 0.07, 0.07]);
    // Seven significant digits: what a float32 bucket holds.
    expect(answer.series.mem_used![0]![1]).toBeCloseTo(4 * GIB, -4);
    expect(f.metrics.guestSeries(1, 101, { series: ['cpu'] }).series.cpu![59]).toEqual([START / 1000 + 59 * 60, 0.5, 0.5]);
  });

  it('rolls minutes up into 15-minute and 6-hour buckets in small transactions, and drops minutes after 48 hours', async () => {
    heartbeats(72);
    const repo = createMetricRepo(f.ctx.db);
    let pauses = 0;
    await createRollups(f.ctx, repo, createStoreReader(repo)).run(Math.floor(f.clock.now() / 1000), async () => void pauses++);
    // 72 hours are 288 quarter hours and 12 six-hour buckets; 16 buckets at most per transaction.
    expect(pauses).toBeGreaterThanOrEqual(Math.ceil(288 / 16));

    // 60 hours ago: past what minutes are kept, so an hour there is 4 quarter hours.
    const from = f.clock.now() - 60 * HOUR;
    const old = f.metrics.hostSeries(1, { from, to: from + HOUR, series: ['cpu'] });
    expect(old.step_s).toBe(900);
    expect(old.series.cpu).toHaveLength(4);
    // Minutes 0..14 of an hour: an average of 0.07, a maximum of 0.14.
    expect(old.series.cpu![0]![1]).toBeCloseTo(0.07, 4);
    expect(old.series.cpu![0]![2]).toBeCloseTo(0.14, 4);
    const minutesBefore = (t: number) => f.ctx.db.prepare('SELECT count(*) FROM metric_buckets WHERE (key / 17179869184) % 4 = 0 AND key % 17179869184 < ?').pluck().get(t);
    const chunksBefore = (t: number) => f.ctx.db.prepare('SELECT count(*) FROM metric_chunks WHERE (key / 17179869184) % 4 = 0 AND key % 17179869184 < ?').pluck().get(t);
    const cutoff = Math.floor((f.clock.now() - 49 * HOUR) / 1000);
    expect([minutesBefore(cutoff), chunksBefore(cutoff)]).toEqual([0, 0]);
    expect(chunksBefore(cutoff + 2 * 3600)).toBeGreaterThan(0);

    // 30 days: 6-hour buckets, each with the average (0.295) and maximum (0.59) of its minutes.
    const month = f.metrics.hostSeries(1, { from: f.clock.now() - 30 * 24 * HOUR, series: ['cpu'] });
    expect(month.step_s).toBe(21_600);
    expect(month.series.cpu).toHaveLength(12);
    for (const [, avg, max] of month.series.cpu!) {
      expect(avg).toBeCloseTo(0.295, 3);
      expect(max).toBeCloseTo(0.59, 3);
    }
    expect(f.metrics.guestSeries(1, 102, { from: f.clock.now() - 7 * 24 * HOUR, series: ['cpu'] }).series.cpu!.every(([, avg]) => Math.abs(avg - 0.1) < 1e-4)).toBe(true);
  });

  it('gives the newest buckets of a coarse chart from the finer tier before the roll-up reaches them', async () => {
    heartbeats(13);
    await f.metrics.rollup();
    heartbeats(1);
    const week = f.metrics.hostSeries(1, { from: f.clock.now() - 7 * 24 * HOUR, series: ['cpu'] });
    expect(week.step_s).toBe(900);
    // 14 hours of quarter hours, the last ones gathered from minutes no roll-up has seen yet.
    expect(week.series.cpu).toHaveLength(14 * 4);
    expect(week.series.cpu!.at(-1)![0]).toBe((START + 14 * HOUR) / 1000 - 900);
  });

  it('drops what is older than 400 days, and keeps a host apart from another', async () => {
    heartbeats(7, 1);
    heartbeats(1, 2);
    await f.metrics.rollup();
    expect(f.metrics.hostSeries(2, { from: f.clock.now() - 2 * HOUR, series: ['cpu'] }).series.cpu).toHaveLength(60);
    f.clock.advance(400 * 24 * HOUR);
    await f.metrics.rollup();
    // The 6-hour bucket that ended more than 400 days ago is gone; the next one (it ends 4 h inside) is kept.
    expect(f.metrics.hostSeries(1, { from: START, to: START + 7 * HOUR, series: ['cpu'] }).series.cpu!.map(([t]) => t)).toEqual([(START + 6 * HOUR) / 1000]);
    f.clock.advance(7 * 24 * HOUR);
    await f.metrics.rollup();
    const left = f.ctx.db.prepare('SELECT key / 17179869184 AS hostTier, key % 17179869184 AS t FROM metric_buckets UNION ALL SELECT key / 17179869184, key % 17179869184 FROM metric_chunks').all();
    expect(left).toEqual([]);
    expect(f.metrics.hostSeries(1, { from: START, to: START + 7 * HOUR, series: ['cpu'] }).series.cpu).toEqual([]);
  });
});
