import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { afterEach, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { bearer, enrolledHost, heartbeat, startHostServer } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';

// server/operations/parts.ts: a burst of operations ends with a young-generation collection of its own
// (V8 reports it as forced), not only with those V8 makes mid-burst.

let server: TestServer;
afterEach(() => server?.stop());

it('a burst of operations queued, handed out and ended is followed by a young-generation collection', async () => {
  server = await startHostServer({ clock: manualClock() });
  const host = await enrolledHost(server);
  const guests = Array.from({ length: 8 }, (_, i) => ({ vmid: 100 + i, name: `g${i}`, type: 'qemu', status: 'running' }));
  expect((await heartbeat(server, host.host_token, { guests })).status).toBe(200);

  const forcedMinor: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { kind, flags } = (entry as PerformanceEntry & { detail: { kind: number; flags: number } }).detail;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR && flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) forcedMinor.push(entry);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    // 8 guest actions, each queued, handed out and ended: 24 changes of operations.
    for (const { vmid } of guests) expect((await server.client.post(`/api/hosts/${host.host_id}/guests/${vmid}/actions`, { action: 'reboot' })).status).toBe(202);
    const polled = await server.anonymous().get('/api/agent/commands?wait=0', bearer(host.host_token));
    expect(polled.body.commands).toHaveLength(8);
    for (const command of polled.body.commands as { operation_id: string }[]) {
      expect((await server.anonymous().post(`/api/agent/operations/${command.operation_id}/result`, { exit_code: 0 }, bearer(host.host_token))).status).toBe(204);
    }
    // GC entries are delivered on a later turn.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(forcedMinor.length).toBeGreaterThanOrEqual(1);
  } finally {
    observer.disconnect();
  }
});
