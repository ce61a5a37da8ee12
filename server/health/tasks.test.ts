import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../../test/helpers/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const until = async (done: () => boolean | Promise<boolean>, ms = 5_000) => {
  for (const end = Date.now() + ms; !(await done()) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
};

describe('the background tasks of the app (server/tasks.ts through ctx.tasks)', () => {
  it('GET /api/health/tasks lists them for diagnostics.read; a viewer gets 403, no session 401, and /api/health tells nothing of them', async () => {
    server = await startServer();
    const res = await server.client.get('/api/health/tasks');
    expect(res.status).toBe(200);
    const names = (res.body.tasks as { name: string }[]).map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['events.keep-alive', 'events.recheck', 'usage.retention', 'metrics.rollup', 'alerts.evaluate', 'notifications.deliver', 'hosts.sweep']),
    );
    expect(res.body.tasks.find((t: { name: string }) => t.name === 'hosts.sweep')).toEqual({
      name: 'hosts.sweep',
      interval_ms: 5_000,
      running: false,
      runs: expect.any(Number),
      failures: 0,
      skipped: 0,
      last_started_at: expect.toSatisfy((v) => v === null || typeof v === 'string'),
      last_ended_at: expect.toSatisfy((v) => v === null || typeof v === 'string'),
      last_failed_at: null,
      next_run_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect((await (await server.signIn('operator')).get('/api/health/tasks')).status).toBe(200);
    expect((await (await server.signIn('viewer')).get('/api/health/tasks')).status).toBe(403);
    expect((await server.anonymous().get('/api/health/tasks')).status).toBe(401);
    expect(Object.keys((await server.anonymous().get('/api/health')).body)).toEqual(['status', 'version']);
  });

  it('a failing task is counted and runs again; what failed is not in the answer', async () => {
    server = await startServer();
    let runs = 0;
    server.context.tasks.every('test.failing', 10, () => {
      runs++;
      throw new Error('secret-looking text sk_live_123');
    });
    await until(() => runs >= 3);
    const res = await server.client.get('/api/health/tasks');
    const failing = res.body.tasks.find((t: { name: string }) => t.name === 'test.failing');
    expect(failing.failures).toBeGreaterThanOrEqual(3);
    expect(failing.last_failed_at).toEqual(expect.any(String));
    expect(res.text).not.toContain('sk_live_123');
  });

  it('close() waits for a task that is running, then closes the database', async () => {
    server = await startServer();
    const { db } = server;
    const steps: string[] = [];
    server.context.tasks.every('test.slow', 10, async () => {
      steps.push('started');
      await new Promise((r) => setTimeout(r, 150));
      // Still open: the database closes only after the runner has stopped.
      steps.push(`database open: ${db.open}`);
      db.prepare('SELECT 1').get();
    });
    await until(() => steps.length > 0);
    await server.stop();
    server = undefined;
    expect(steps).toEqual(['started', 'database open: true']);
    expect(db.open).toBe(false);
  });
});
