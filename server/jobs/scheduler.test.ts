import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTasks } from '../tasks.js';
import { Scheduler } from './scheduler.js';

const MIN = 60_000;

/** The real task runner on fake time: `advance` runs whatever falls due, in order; the clock is Date.now(). */
function setup() {
  vi.useFakeTimers({ now: Date.parse('2026-11-22T10:00:00.000Z') });
  const clock = { now: () => Date.now() };
  const tasks = createTasks(pino({ level: 'silent' }));
  tasks.start();
  const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);
  /** The jobs' tasks the runner holds. */
  const pending = { get size() { return tasks.status().length; } };
  const runs: Array<{ id: number; at: number }> = [];
  const scheduler = new Scheduler({ clock, tasks, run: (id) => runs.push({ id, at: clock.now() }) });
  return { clock, advance, pending, runs, scheduler };
}
afterEach(() => {
  vi.useRealTimers();
});

describe('Scheduler', () => {
  it('runs an enabled job every schedule minutes and a disabled one never', async () => {
    const { advance, runs, scheduler, clock } = setup();
    const start = clock.now();
    scheduler.reset([
      { id: 1, enabled: true, schedule: 15 },
      { id: 2, enabled: false, schedule: 1 },
    ]);
    await advance(46 * MIN);
    expect(runs).toEqual([
      { id: 1, at: start + 15 * MIN },
      { id: 1, at: start + 30 * MIN },
      { id: 1, at: start + 45 * MIN },
    ]);
  });

  it('a changed schedule takes effect at once, and disabling stops the timer', async () => {
    const { advance, runs, scheduler, clock, pending } = setup();
    const start = clock.now();
    scheduler.set({ id: 1, enabled: true, schedule: 60 });
    await advance(10 * MIN);
    scheduler.set({ id: 1, enabled: true, schedule: 5 });
    await advance(11 * MIN);
    expect(runs.map((r) => r.at)).toEqual([start + 15 * MIN, start + 20 * MIN]);
    scheduler.set({ id: 1, enabled: false, schedule: 5 });
    expect(pending.size).toBe(0);
    await advance(60 * MIN);
    expect(runs).toHaveLength(2);
  });

  it('setting the same schedule again does not postpone the next run', async () => {
    const { advance, runs, scheduler } = setup();
    scheduler.set({ id: 1, enabled: true, schedule: 10 });
    await advance(9 * MIN);
    scheduler.set({ id: 1, enabled: true, schedule: 10 });
    await advance(1 * MIN);
    expect(runs).toHaveLength(1);
  });

  it('after a restart a job whose interval has passed since its last run runs at once', async () => {
    const { advance, runs, scheduler, clock } = setup();
    scheduler.reset([{ id: 1, enabled: true, schedule: 60, lastRunAt: clock.now() - 3 * 60 * MIN }]);
    await advance(0);
    expect(runs).toHaveLength(1);
    scheduler.reset([{ id: 2, enabled: true, schedule: 60, lastRunAt: clock.now() - 50 * MIN }]);
    await advance(9 * MIN);
    expect(runs).toHaveLength(1);
    await advance(1 * MIN);
    expect(runs.map((r) => r.id)).toEqual([1, 2]);
  });

  it('stop clears every timer and ignores later changes', async () => {
    const { advance, runs, scheduler, pending } = setup();
    scheduler.set({ id: 1, enabled: true, schedule: 1 });
    scheduler.stop();
    scheduler.set({ id: 2, enabled: true, schedule: 1 });
    expect(pending.size).toBe(0);
    await advance(10 * MIN);
    expect(runs).toEqual([]);
  });
});
