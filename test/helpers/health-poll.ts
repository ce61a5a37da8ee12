import { expect, onTestFinished } from 'vitest';
import type { TestClient } from './http.js';

export interface Polled<T> {
  /** What the work answered. */
  result: T;
  /** How long each health answer took (ms), in order. */
  health: number[];
  /** The slowest of them (0 when none came back). */
  slowest: number;
  /** How long the work took (ms). */
  took: number;
}

/**
 * Runs `work` while `client` asks GET /api/health again and again (`gapMs` after each answer), each
 * answer a 200: the tests that try a route with its largest input hold `slowest` to a bound on wall
 * time (test/README.md "Bounds on wall time").
 */
export async function whileHealthPolled<T>(client: Pick<TestClient, 'get'>, work: () => Promise<T>, gapMs = 20): Promise<Polled<T>> {
  let polling = true;
  // A test that times out leaves its work unfinished: the polling ends with the test, not with the server.
  onTestFinished(() => {
    polling = false;
  });
  const health: number[] = [];
  const poll = (async () => {
    while (polling) {
      const started = performance.now();
      let status: number;
      try {
        status = (await client.get('/api/health')).status;
      } catch (err) {
        if (!polling) return;
        throw err;
      }
      expect(status).toBe(200);
      health.push(performance.now() - started);
      if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
  })();
  const started = performance.now();
  let result: T;
  let took: number;
  try {
    result = await work();
    took = performance.now() - started;
  } finally {
    polling = false;
    await poll;
  }
  return { result, health, slowest: health.length ? Math.max(...health) : 0, took };
}

/** The message of a bound on `slowest`: every answer's time and the work's. */
export const healthTimes = ({ health, took }: Polled<unknown>, what: string): string =>
  `health answers took ${health.map(Math.round).join(', ')} ms while ${what} took ${Math.round(took)} ms`;
