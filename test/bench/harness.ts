import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { expressServerOptions } from '../../server/http/server.js';

type Listening = { url: string; close(): Promise<void> };

/** Serves homefleet's Express app on 127.0.0.1 the way the product does (server/tls/listen.ts, the desktop app). */
export function serveApp(app: Express): Promise<Listening> {
  return listen(app, expressServerOptions(app));
}

/** Starts a request listener on 127.0.0.1 at a free port. */
export async function listen(handler: http.RequestListener, options: http.ServerOptions = {}): Promise<Listening> {
  const server = http.createServer({ keepAlive: true, ...options }, handler);
  // The benchmarks block their own event loop for seconds (parsing a 26 MB baseline document): keep idle
  // keep-alive sockets open meanwhile, or the client reuses one the server has just closed.
  server.keepAliveTimeout = 120_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  /** Milliseconds from sending each request to reading its whole answer, sorted ascending. */
  latencies: number[];
}

/** What a load's `send` answers: the status and the whole body, as fetch's Response gives them. */
export interface Answer {
  status: number;
  arrayBuffer(): Promise<ArrayBuffer | Buffer>;
}

/**
 * Sends `requests` requests with `concurrency` in flight, all to a loopback server the benchmark
 * started, and reports the rate. Every answer's status is checked so a failing server cannot look fast.
 */
export async function load(
  requests: number,
  concurrency: number,
  send: (i: number) => Promise<Answer>,
  expectStatus: number,
): Promise<LoadResult> {
  let next = 0;
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < requests) {
      const i = next++;
      const sent = performance.now();
      const res = await send(i);
      await res.arrayBuffer();
      latencies.push(performance.now() - sent);
      if (res.status !== expectStatus) throw new Error(`request ${i}: status ${res.status}, expected ${expectStatus}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return { requests, seconds, perSecond: requests / seconds, latencies };
}

/** Runs candidate and baseline alternately `rounds` times and keeps each one's best, to damp noise. */
export async function compare(rounds: number, baseline: () => Promise<LoadResult>, candidate: () => Promise<LoadResult>) {
  let best = { baseline: 0, candidate: 0 };
  for (let round = 0; round < rounds; round++) {
    const b = await baseline();
    const c = await candidate();
    best = { baseline: Math.max(best.baseline, b.perSecond), candidate: Math.max(best.candidate, c.perSecond) };
  }
  return { ...best, ratio: best.candidate / best.baseline };
}

/** One result line; `target` is a goal such as '>= 0.6', or undefined for a measure that has none (printed only). */
export function report(name: string, result: { baseline: number; candidate: number; ratio: number }, target?: string) {
  const verdict = target ? ` (goal ${target}) ${meets(result.ratio, target)}` : '';
  const line = `${name}: homefleet ${result.candidate.toFixed(0)}/s, floor ${result.baseline.toFixed(0)}/s, ratio ${result.ratio.toFixed(3)}${verdict}`;
  console.log(line);
  return line;
}

/** 'met' or 'NOT MET' for a ratio against a goal written as '>= 0.95' or '<= 2.5'. Never throws: a number is not an error. */
export function meets(ratio: number, goal: string): string {
  const [op, value] = goal.split(' ');
  const ok = op === '>=' ? ratio >= Number(value) : ratio <= Number(value);
  return ok ? 'met' : 'NOT MET';
}
