import { describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { Scheduler, type Timers } from './scheduler.js';

/** Timers driven by the manual clock: `advance` fires whatever falls due, in order. */
function manualTimers(clock: ReturnType<typeof manualClock>) {
  let seq = 0;
  const pending = new Map<number, { at: number; fn: () => void }>();
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      const id = ++seq;
      pending.set(id, { at: clock.now() + ms, fn });
      return id;
    },
    clearTimeout: (id) => void pending.delete(id as number),
  };
  const advance = (ms: number) => {
    const end = clock.now() + ms;
    for (;;) {
      const next = [...pending.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!next) break;
      pending.delete(next[0]);
      clock.set(next[1].at);
      next[1].fn();
    }
    clock.set(end);
  };
  return { timers, advance, pending };
}

const MIN = 60_000;

function setup() {
  const clock = manualClock();
  const { timers, advance, pending } = manualTimers(clock);
  const runs: Array<{ id: number; at: number }> = [];
  const scheduler = new Scheduler({ clock, timers, run: (id) => runs.push({ id, at: clock.now() }) });
  return { clock, advance, pending, runs, scheduler };
}

describe('Scheduler', () => {
  it('runs an enabled job every schedule minutes and a disabled one never', () => {
    const { advance, runs, scheduler, clock } = setup();
    const start = clock.now();
    scheduler.reset([
      { id: 1, enabled: true, schedule: 15 },
      { id: 2, enabled: false, schedule: 1 },
    ]);
    advance(46 * MIN);
    expect(runs).toEqual([
      { id: 1, at: start + 15 * MIN },
      { id: 1, at: start + 30 * MIN },
      { id: 1, at: start + 45 * MIN },
    ]);
  });

  it('a changed schedule takes effect at once, and disabling stops the timer', () => {
    const { advance, runs, scheduler, clock, pending } = setup();
    const start = clock.now();
    scheduler.set({ id: 1, enabled: true, schedule: 60 });
    advance(10 * MIN);
    scheduler.set({ id: 1, enabled: true, schedule: 5 });
    advance(11 * MIN);
    expect(runs.map((r) => r.at)).toEqual([start + 15 * MIN, start + 20 * MIN]);
    scheduler.set({ id: 1, enabled: false, schedule: 5 });
    expect(pending.size).toBe(0);
    advance(60 * MIN);
    expect(runs).toHaveLength(2);
  });

  it('setting the same schedule again does not postpone the next run', () => {
    const { advance, runs, scheduler } = setup();
    scheduler.set({ id: 1, enabled: true, schedule: 10 });
    advance(9 * MIN);
    scheduler.set({ id: 1, enabled: true, schedule: 10 });
    advance(1 * MIN);
    expect(runs).toHaveLength(1);
  });

  it('after a restart a job whose interval has passed since its last run runs at once', () => {
    const { advance, runs, scheduler, clock } = setup();
    scheduler.reset([{ id: 1, enabled: true, schedule: 60, lastRunAt: clock.now() - 3 * 60 * MIN }]);
    advance(0);
    expect(runs).toHaveLength(1);
    scheduler.reset([{ id: 2, enabled: true, schedule: 60, lastRunAt: clock.now() - 50 * MIN }]);
    advance(9 * MIN);
    expect(runs).toHaveLength(1);
    advance(1 * MIN);
    expect(runs.map((r) => r.id)).toEqual([1, 2]);
  });

  it('stop clears every timer and ignores later changes', () => {
    const { advance, runs, scheduler, pending } = setup();
    scheduler.set({ id: 1, enabled: true, schedule: 1 });
    scheduler.stop();
    scheduler.set({ id: 2, enabled: true, schedule: 1 });
    expect(pending.size).toBe(0);
    advance(10 * MIN);
    expect(runs).toEqual([]);
  });
});
