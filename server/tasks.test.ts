import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTasks, within, type Tasks } from './tasks.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until `done()` holds (a loaded machine runs timers late; the assertions after it say what must hold). */
async function until(done: () => boolean, ms = 3_000): Promise<void> {
  for (const end = Date.now() + ms; !done() && Date.now() < end; ) await sleep(5);
}

/** A runner whose log lines are kept, parsed, for the test to read. */
function runner(options: { stopTimeoutMs?: number } = {}) {
  const lines: { level: number; msg: string; task?: string; tasks?: string[]; err?: { message: string } }[] = [];
  const logger = pino({ level: 'info', base: undefined }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const tasks = createTasks(logger, options);
  runners.push(tasks);
  return { tasks, lines };
}
const runners: Tasks[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(runners.splice(0).map((t) => t.stop()));
});

describe('the task runner (server/tasks.ts)', () => {
  it('runs a repeating task every interval, and nothing before it is started', async () => {
    const { tasks } = runner();
    let runs = 0;
    tasks.every('count', 20, () => void runs++);
    await sleep(70);
    expect(runs).toBe(0);
    const started = Date.now();
    tasks.start();
    await until(() => runs >= 3);
    // The interval counts from the start: three runs take three intervals, however long it waited before.
    expect(Date.now() - started).toBeGreaterThanOrEqual(59);
  });

  it('never runs a slow task beside itself: a tick that falls during a run is skipped, and counted', async () => {
    const { tasks } = runner();
    let going = 0;
    let most = 0;
    let runs = 0;
    tasks.every('slow', 10, async () => {
      runs++;
      most = Math.max(most, ++going);
      await sleep(45);
      going--;
    });
    tasks.start();
    await sleep(300);
    expect(most).toBe(1);
    // 300 ms of 45 ms runs: at most seven, where ticks every 10 ms would have started thirty.
    expect(runs).toBeGreaterThanOrEqual(3);
    expect(runs).toBeLessThanOrEqual(7);
    const [status] = tasks.status();
    expect(status).toMatchObject({ name: 'slow', interval_ms: 10, failures: 0 });
    expect(status!.skipped).toBeGreaterThanOrEqual(runs - 1);
  });

  it('logs a failure under the task name, and the next run still comes (a throw and a rejection alike)', async () => {
    const { tasks, lines } = runner();
    let runs = 0;
    tasks.every('flaky', 15, () => {
      runs++;
      if (runs === 1) throw new Error('disk on fire');
      if (runs === 2) return Promise.reject(new Error('still on fire'));
    });
    tasks.start();
    await until(() => runs >= 3);
    expect(runs).toBeGreaterThanOrEqual(3);
    const failures = lines.filter((l) => l.level === 50);
    expect(failures.slice(0, 2)).toMatchObject([
      { task: 'flaky', err: { message: 'disk on fire' }, msg: 'background task flaky failed' },
      { task: 'flaky', err: { message: 'still on fire' }, msg: 'background task flaky failed' },
    ]);
    expect(tasks.status()[0]).toMatchObject({ failures: 2, last_failed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });

  it('stop waits for a run going on, aborts its signal, and starts no run after it', async () => {
    const { tasks } = runner();
    const events: string[] = [];
    let signal: AbortSignal | undefined;
    let runs = 0;
    tasks.every('long', 10, async (s) => {
      signal = s;
      runs++;
      events.push('started');
      await sleep(80);
      events.push('ended');
    });
    tasks.start();
    await sleep(30);
    expect(events).toEqual(['started']);
    await tasks.stop();
    events.push('stopped');
    expect(events).toEqual(['started', 'ended', 'stopped']);
    expect(signal!.aborted).toBe(true);
    await sleep(50);
    expect(runs).toBe(1);
    expect(tasks.status()[0]).toMatchObject({ running: false, next_run_at: null });
  });

  it('stop waits no longer than its bound for a run that never ends, and names it', async () => {
    const { tasks, lines } = runner({ stopTimeoutMs: 50 });
    tasks.every('stuck', 5, () => new Promise(() => {}));
    tasks.start();
    await sleep(20);
    const started = performance.now();
    await tasks.stop();
    expect(performance.now() - started).toBeLessThan(500);
    expect(lines.at(-1)).toMatchObject({ level: 40, tasks: ['stuck'], msg: 'background tasks still running after 0.05 s; stopping without them' });
  });

  it('runs a one-shot at its time, once, and forgets it', async () => {
    const { tasks } = runner();
    tasks.start();
    const ran: number[] = [];
    const started = Date.now();
    tasks.at('once', new Date(started + 40), () => void ran.push(Date.now() - started));
    expect(tasks.status()).toEqual([expect.objectContaining({ name: 'once', interval_ms: null, next_run_at: new Date(started + 40).toISOString() })]);
    await sleep(100);
    expect(ran).toHaveLength(1);
    expect(ran[0]).toBeGreaterThanOrEqual(39);
    expect(tasks.status()).toEqual([]);
    // The name is free again.
    tasks.at('once', new Date(), () => void ran.push(0));
    await until(() => ran.length === 2);
    expect(ran).toHaveLength(2);
  });

  it('a cancelled one-shot never runs; one rescheduled from its own run runs again at the new time', async () => {
    const { tasks } = runner();
    tasks.start();
    let cancelledRan = false;
    tasks.at('cancelled', new Date(Date.now() + 20), () => void (cancelledRan = true)).cancel();
    const chained: number[] = [];
    const chain = tasks.at('chain', new Date(), () => {
      chained.push(Date.now());
      if (chained.length < 3) chain.reschedule(new Date(Date.now() + 15));
    });
    await until(() => chained.length === 3);
    await sleep(30);
    expect(cancelledRan).toBe(false);
    expect(chained).toHaveLength(3);
    expect(chained[2]! - chained[0]!).toBeGreaterThanOrEqual(28);
    expect(tasks.status()).toEqual([]);
  });

  it('waits past what one setTimeout can hold (~24.8 days) for a one-shot 40 days out', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-22T10:00:00Z') });
    const { tasks } = runner();
    tasks.start();
    let ran = false;
    tasks.at('far', new Date(Date.parse('2027-01-01T10:00:00Z')), () => void (ran = true));
    await vi.advanceTimersByTimeAsync(39 * 86_400_000);
    expect(ran).toBe(false);
    await vi.advanceTimersByTimeAsync(86_400_000);
    expect(ran).toBe(true);
  });

  it('refuses a second live task of one name, and an interval that is not positive', () => {
    const { tasks } = runner();
    tasks.every('twice', 1_000, () => undefined);
    expect(() => tasks.every('twice', 1_000, () => undefined)).toThrow('background task twice is already registered');
    expect(() => tasks.every('never', 0, () => undefined)).toThrow('interval must be positive');
  });

  it('within: true when the work settles in time, false once the bound passes', async () => {
    expect(await within(sleep(5), 200)).toBe(true);
    expect(await within(Promise.reject(new Error('failed is settled')), 200)).toBe(true);
    expect(await within(new Promise(() => {}), 20)).toBe(false);
  });
});
