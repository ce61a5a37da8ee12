import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBuiltServer } from './helpers/built-server.js';
import { ensureBuilt } from './helpers/build.js';
import { waitForListening } from './helpers/listening.js';

/**
 * The built server stops on an error nothing catches, with a last log line saying why and status 1,
 * for systemd or the container runtime to restart it. The error is raised by a test preload
 * (test/fixtures/fatal-on-signal.mjs) on SIGUSR2: the server has no way to be told to fail.
 */
const root = path.resolve(import.meta.dirname, '..');
const fixture = path.join(import.meta.dirname, 'fixtures', 'fatal-on-signal.mjs');

describe.concurrent('a fatal error in the built server', () => {
  it.for([
    ['throw', 'homefleet stopped by an uncaught exception: thrown where nothing catches it'],
    ['reject', 'homefleet stopped by an unhandled promise rejection: a rejection nobody handles'],
  ] as const)('%s: the last line says why, and the status is 1', async ([mode, msg], { onTestFinished }) => {
    const server = await startBuiltServer({ DB_PATH: ':memory:', FATAL_FIXTURE: mode }, ['--import', fixture]);
    onTestFinished(() => void server.child.kill('SIGKILL'));
    server.child.kill('SIGUSR2');
    const exited = await server.child;
    expect(exited.exitCode).toBe(1);
    const last = JSON.parse(exited.stdout.trim().split('\n').at(-1)!);
    expect(last).toMatchObject({ level: 60, msg, err: { type: 'Error', stack: expect.stringContaining('fatal-on-signal.mjs') } });
  });

  it('ends within seconds even when nobody reads its output any more', async ({ onTestFinished }) => {
    await ensureBuilt();
    const child = spawn(process.execPath, ['--import', fixture, 'dist/server/main.js'], {
      cwd: root,
      env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DB_PATH: ':memory:', FATAL_FIXTURE: 'full-stdout' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => void child.kill('SIGKILL'));
    const url = await waitForListening(child);
    // The pipe fills up, and the log lines of two requests wait in pino's buffer: writes to stdout,
    // pino's and the last line's alike, get EAGAIN from then on, and pino would wait them out on exit.
    // Filled twice: the paused reader still takes what fits its own buffer after the first time.
    child.stdout.pause();
    child.kill('SIGUSR2');
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGUSR2');
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 2; i++) expect((await fetch(`${url}/api/health`)).status).toBe(200);
    const started = Date.now();
    child.kill('SIGUSR2');
    const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal }));
    const outcome = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running after 10 s'), 10_000))]);
    // Killed by its own last resort, 3 s after the last line could not be written.
    expect(outcome).toEqual({ code: null, signal: 'SIGKILL' });
    expect(Date.now() - started).toBeLessThan(8000);
  });
});
