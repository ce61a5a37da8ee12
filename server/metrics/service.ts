import type { AppContext } from '../context.js';
import { validationFailed } from '../errors.js';
import { GUEST_SERIES, HOST_SERIES, LIVE_EVENT_GUESTS, type HostMetricsEvent, type HostMetricsLatest } from '../contract/metrics.js';
import { createIngest, type MetricsReport } from './ingest.js';
import { createQuery } from './query.js';
import { createMetricRepo } from './repo.js';
import { createRollups } from './rollup.js';
import type { MetricsRange } from '../contract/inputs/metrics.js';
import { createStoreReader } from './store.js';

export interface MetricsOptions {
  /** Milliseconds between roll-up passes (default one minute); tests shorten it. */
  rollupIntervalMs?: number;
}

const HOUR_MS = 3_600_000;

/** A heartbeat's values as the live event carries them: small whatever the host's size (the dashboard reads a large host's guests itself). */
const metricsEvent = (latest: HostMetricsLatest): HostMetricsEvent =>
  latest.guests.length <= LIVE_EVENT_GUESTS ? latest : { ...latest, guests: [], guests_omitted: true };

/**
 * Host and guest metrics: heartbeats fold their numbers in (record, inside the heartbeat's
 * transaction), charts read them back at the resolution that fits, and a timer rolls them up.
 */
export function createMetricsService(ctx: AppContext, options: MetricsOptions = {}) {
  const repo = createMetricRepo(ctx.db);
  const store = createStoreReader(repo);
  const ingest = createIngest(repo);
  const query = createQuery(repo, store);
  const rollups = createRollups(ctx, repo, store);
  let running: Promise<void> | undefined;
  let closed = false;

  function range(q: MetricsRange): [number, number] {
    const now = ctx.clock.now();
    const to = q.to ?? now;
    const from = q.from ?? to - HOUR_MS;
    if (from >= to) throw validationFailed([{ field: 'from', message: 'must be before to' }]);
    return [from, to];
  }

  /** One pass, shared by the task and whoever asks for one meanwhile; rejects when it fails (the task runner logs it). */
  function rollupPass(): Promise<void> {
    running ??= rollups.run(Math.floor(ctx.clock.now() / 1000)).finally(() => (running = undefined));
    return running;
  }

  return {
    /** Inside the heartbeat's transaction; the live event is heard once that commits. */
    record(hostId: number, report: MetricsReport, now: number): void {
      const value = ingest.record(hostId, report, now);
      if (value) ctx.bus.publish('host.metrics', metricsEvent(value));
    },

    /** `record` for a heartbeat of any size: made ready over several turns before its transaction, then what it resolves to runs inside it. */
    async prepare(hostId: number, report: MetricsReport, now: number): Promise<() => void> {
      const commit = await ingest.prepare(hostId, report, now);
      return () => {
        const value = commit();
        if (value) ctx.bus.publish('host.metrics', metricsEvent(value));
      };
    },

    latest: (hostId: number): HostMetricsLatest | undefined => ingest.latest(hostId),

    hostSeries(hostId: number, q: MetricsRange) {
      const [from, to] = range(q);
      const names = q.series ?? HOST_SERIES;
      return query.series(hostId, 0, from, to, ctx.clock.now(), names.map((n) => [n, HOST_SERIES.indexOf(n as (typeof HOST_SERIES)[number])] as const));
    },

    guestSeries(hostId: number, vmid: number, q: MetricsRange) {
      const [from, to] = range(q);
      const names = q.series ?? GUEST_SERIES;
      return query.series(hostId, vmid, from, to, ctx.clock.now(), names.map((n) => [n, GUEST_SERIES.indexOf(n as (typeof GUEST_SERIES)[number])] as const));
    },

    /** One roll-up pass now (tests, the benchmark); the task runs the same. */
    rollup: () => rollupPass().catch((err: Error) => ctx.logger.error({ err: { message: err.message } }, 'metric roll-up failed')),

    start(): void {
      ctx.tasks.every('metrics.rollup', options.rollupIntervalMs ?? 60_000, rollupPass);
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await running?.catch(() => undefined);
    },
  };
}

export type MetricsService = ReturnType<typeof createMetricsService>;
