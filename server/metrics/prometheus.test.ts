import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { scrape, type FleetGaugeSources } from './prometheus.js';

// A heartbeat refuses control characters in names, but the exporter does not rely on it: whatever a
// label holds is escaped as the text format says, so a parser reads back exactly what was there.
const NAMES = ['quote " in it', 'back\\slash', 'new\nline', 'all "\\\n" of them', 'ünïcödé'];

const sources = (names: string[]): FleetGaugeSources => ({
  hosts: () => [{ id: 1, hostname: 'pve "1"\\', up: true }],
  guests: () => names.map((name, i) => ({ host_id: 1, vmid: 100 + i, name, type: 'qemu', status: i % 2 ? 'stopped' : 'running' })),
  instances: () => [{ state: 'deployed', stack: 'production', count: 3 }],
  jobLastSuccess: () => [{ job: 'tailscale_sync', at: 1_700_000_000_000 }, { job: 'patchmon_sync', at: null }],
  alertsFiring: () => [{ rule: 'host.offline', count: 2 }],
});

describe('the Prometheus exporter', () => {
  it('escapes label values (quotes, backslashes, line feeds) so the text parses back to the same values', async () => {
    const { contentType, text } = await scrape(sources(NAMES), () => ({ host_id: 1, at: '', host: { cpu: 0.5 }, guests: NAMES.map((_, i) => ({ vmid: 100 + i, cpu: 0.1, mem: 1024, maxmem: null, disk: null, maxdisk: null, uptime_s: null, netin: null, netout: null })), bucket: { t: 0, series: {} } }));
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusTextFormat(text);
    const running = families.find((f) => f.name === 'homefleet_guest_running')!;
    expect(running.metrics.map((m) => m.labels!.name)).toEqual(NAMES);
    expect(running.metrics.map((m) => m.labels!.host)).toEqual(NAMES.map(() => 'pve "1"\\'));
    expect(families.find((f) => f.name === 'homefleet_guest_memory_bytes')!.metrics).toHaveLength(NAMES.length);
    expect(families.find((f) => f.name === 'homefleet_job_last_success_timestamp_seconds')!.metrics).toEqual([{ labels: { job: 'tailscale_sync' }, value: '1700000000' }]);
    expect(families.find((f) => f.name === 'homefleet_instances')!.metrics).toEqual([{ labels: { state: 'deployed', stack: 'production' }, value: '3' }]);
    // No line of the text is broken by a name: every sample line is name{labels} value.
    for (const line of text.split('\n')) if (line && !line.startsWith('#')) expect(line).toMatch(/^[a-z_0-9]+(\{.*\})? \S+$/);
  });

  it('leaves no series of a host that is gone: each scrape is built afresh', async () => {
    await scrape(sources(['a']), () => undefined);
    const { text } = await scrape({ ...sources([]), hosts: () => [] }, () => undefined);
    expect(text).not.toContain('homefleet_guest_running{');
    expect(text).not.toContain('homefleet_host_up{');
  });
});
