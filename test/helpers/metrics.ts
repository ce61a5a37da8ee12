import { afterEach, beforeEach } from 'vitest';
import { defaultConfig } from '../../server/config.js';
import { createContext, type AppContext } from '../../server/context.js';
import { openDatabase } from '../../server/db/database.js';
import { createLogger } from '../../server/logger.js';
import { createMetricsService, type MetricsService } from '../../server/metrics/service.js';
import { manualClock, type ManualClock } from './clock.js';

export interface MetricsFixture {
  clock: ManualClock;
  ctx: AppContext;
  metrics: MetricsService;
}

/**
 * A fresh metrics service on an in-memory database and a clock at `start` for each test, closed
 * after it. Read the fields inside a test: they are replaced before each one.
 */
export function useMetricsService(start: number): MetricsFixture {
  const fixture = {} as MetricsFixture;
  beforeEach(() => {
    fixture.clock = manualClock(start);
    fixture.ctx = createContext({ db: openDatabase(':memory:'), config: defaultConfig(), clock: fixture.clock, logger: createLogger('silent'), tls: undefined });
    fixture.metrics = createMetricsService(fixture.ctx);
  });
  afterEach(async () => {
    await fixture.metrics.close();
    fixture.ctx.db.close();
  });
  return fixture;
}
