// The real agent (installed by the served installer) with fake /proc files and a fake pvesh, heartbeating
// every second to the real server; Chromium shows its numbers on the host page's charts, live, and the
// Alerts page and Settings → Notifications work against them. Screenshots, light and dark, go to
// dist/screenshots/ to be looked at.
import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { root, signIn, startDashboard, type Dashboard } from './helpers.js';

const fakeBin = path.join(root, 'reporter/test/fixtures/agent-bin');
const shots = path.join(root, 'dist', 'screenshots');
let dash: Dashboard;
let dir: string;
let hostRoot: string;
let env: Record<string, string>;
let agent: ResultPromise | undefined;
let receiver: Receiver;

/** /proc/stat with `busy` of every 100 jiffies spent working, `round` times over. */
const stat = (round: number, busy: number) => `cpu  ${round * busy} 0 0 ${round * (100 - busy)} 0 0 0 0 0 0\n`;
const netdev = (round: number) => `Inter-| Receive | Transmit\n face |bytes packets|bytes\n  eno1: ${round * 50_000} 2000 0 0 0 0 0 0 ${round * 20_000} 4000 0 0 0 0 0 0\n`;
const meminfo = (availableKb: number) => `MemTotal:       16384000 kB\nMemFree:         1000000 kB\nMemAvailable:    ${availableKb} kB\n`;

beforeAll(async () => {
  dash = await startDashboard({ config: { agentAllowHttp: true }, hosts: { heartbeatIntervalS: 1 } });
  receiver = await startReceiver();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-metrics-e2e-'));
  hostRoot = path.join(dir, 'root');
  fs.mkdirSync(path.join(hostRoot, 'etc'), { recursive: true });
  fs.mkdirSync(path.join(hostRoot, 'proc/net'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'pve'));
  fs.writeFileSync(path.join(hostRoot, 'etc/machine-id'), 'e2e0123456789abcdef0123456789metr\n');
  fs.writeFileSync(path.join(hostRoot, 'etc/hostname'), 'pve-charts\n');
  fs.writeFileSync(path.join(hostRoot, 'proc/stat'), stat(1, 30));
  fs.writeFileSync(path.join(hostRoot, 'proc/meminfo'), meminfo(8_192_000));
  fs.writeFileSync(path.join(hostRoot, 'proc/loadavg'), '0.52 0.40 0.33 2/612 12345\n');
  fs.writeFileSync(path.join(hostRoot, 'proc/net/dev'), netdev(1));
  fs.writeFileSync(
    path.join(dir, 'pve', 'pvesh-pve-charts-qemu.json'),
    JSON.stringify([{ vmid: 100, name: 'web', status: 'running', cpu: 0.0523, mem: 1610612736, maxmem: 4294967296, disk: 0, maxdisk: 34359738368, uptime: 86400, netin: 1000, netout: 2000 }]),
  );
  env = {
    PATH: `${fakeBin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    HOME: dir,
    TMPDIR: dir,
    FAKE_SYSTEMCTL_LOG: path.join(dir, 'systemctl.log'),
    FAKE_PVE_DIR: path.join(dir, 'pve'),
    HOMEFLEET_INTERVAL_MIN_S: '1',
    HOMEFLEET_CURL_MAX_TIME: '5',
  };
  fs.mkdirSync(shots, { recursive: true });
});

afterAll(async () => {
  agent?.kill('SIGTERM');
  await agent?.catch(() => undefined);
  await receiver?.close();
  await dash?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('metrics on the dashboard', () => {
  it('the real agent with a fake pvesh sends numbers that the host page charts, live, in light and dark', { timeout: 60_000 }, async () => {
    const token = (await dash.server.client.post('/api/hosts/enrollment-tokens', { name: 'charts' })).body.token as string;
    const installed = await execa('bash', ['-c', 'set -o pipefail; curl -fsSL "$1/install/agent.sh" | bash -s -- --token "$2" --root "$3"', 'install', dash.server.baseUrl, token, hostRoot], {
      env,
      extendEnv: false,
      reject: false,
      timeout: 30_000,
    });
    expect(installed.exitCode, installed.stderr).toBe(0);
    agent = execa('bash', [path.join(hostRoot, 'usr/local/lib/homefleet-agent/host-agent.sh'), '--root', hostRoot], { env, extendEnv: false, reject: false });
    // CPU is measured between two readings: move /proc/stat on while the agent heartbeats.
    let round = 1;
    const ticker = setInterval(() => {
      fs.writeFileSync(path.join(hostRoot, 'proc/stat'), stat(++round, 30));
      fs.writeFileSync(path.join(hostRoot, 'proc/net/dev'), netdev(round));
    }, 400);
    try {
      const hostId = (await dash.server.client.get('/api/hosts')).body[0].id as number;
      await expect.poll(async () => (await dash.server.client.get(`/api/hosts/${hostId}/metrics?series=cpu`)).body.series.cpu.length, { timeout: 15_000 }).toBeGreaterThan(0);

      const page = await dash.newPage({ viewport: { width: 1280, height: 1400 } });
      await signIn(page, dash.server, 'viewer', `/hosts/${hostId}`);
      const cpu = page.getByTestId('chart-cpu');
      // One point a minute: two when the run crosses a minute's edge.
      await expect.poll(async () => Number(await cpu.getAttribute('data-points')), { timeout: 15_000 }).toBeGreaterThan(0);
      // The bucket's average and its peak (the same here: the fake host is 30% busy throughout).
      await expect.poll(() => cpu.locator('h3').textContent()).toMatch(/^CPU\s+average 30\.0%\s+peak 30\.0%$/);
      // The plot is drawn once the chart is in the page, not in the same step.
      await expect.poll(() => cpu.locator('canvas').count()).toBe(1);
      expect(await page.getByTestId('chart-memory').locator('h3').textContent()).toMatch(/used 7\.8 GiB\s+total 15\.6 GiB/);
      expect(await page.getByTestId('chart-network').count()).toBe(1);
      expect(await page.getByTestId('chart-disk').count()).toBe(1);
      // The guest's small figures, from pvesh through the heartbeat.
      const guest = page.locator('tr[data-guest="100"]');
      await expect.poll(() => guest.getByTestId('guest-cpu').textContent()).toBe('5.2%');
      expect(await guest.getByTestId('guest-mem').textContent()).toBe('1.5 GiB of 4.0 GiB');

      // Live: memory use grows on the host; the chart's figure follows without a reload.
      fs.writeFileSync(path.join(hostRoot, 'proc/meminfo'), meminfo(1_000_000));
      await expect.poll(() => page.getByTestId('chart-memory').locator('h3').textContent(), { timeout: 15_000 }).not.toMatch(/used 7\.8 GiB/);

      // Each range at the resolution PRODUCT.md's 1,500-point rule gives it.
      for (const [range, step] of [['24 h', '60'], ['7 d', '900'], ['30 d', '21600'], ['1 h', '60']] as const) {
        await page.getByRole('button', { name: range }).click();
        await expect.poll(() => page.getByTestId('charts').getAttribute('data-step')).toBe(step);
        // A few seconds of heartbeats: one bucket, or two when they straddle a bucket's edge.
        await expect.poll(async () => [1, 2].includes(Number(await cpu.getAttribute('data-points')))).toBe(true);
      }
      await page.screenshot({ path: path.join(shots, 'host-metrics-light.png'), fullPage: true });
      const dark = await dash.newPage({ viewport: { width: 1280, height: 1400 }, colorScheme: 'dark' });
      await signIn(dark, dash.server, 'viewer', `/hosts/${hostId}`);
      await expect.poll(async () => ['1', '2'].includes((await dark.getByTestId('chart-cpu').getAttribute('data-points')) ?? ''), { timeout: 15_000 }).toBe(true);
      await dark.screenshot({ path: path.join(shots, 'host-metrics-dark.png'), fullPage: true });
    } finally {
      clearInterval(ticker);
    }
  });

  it('the Alerts page shows host.offline live when the agent stops; Settings tests and edits a channel', { timeout: 60_000 }, async () => {
    const page = await dash.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, dash.server, 'administrator', '/alerts');
    await expect.poll(() => page.getByTestId('firing-count').textContent()).toBe('nothing firing');
    agent!.kill('SIGTERM');
    await agent!.catch(() => undefined);
    agent = undefined;
    // for_s is 3 intervals (3 s here): the row appears without a reload.
    const row = page.locator('tr[data-status="firing"]');
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    expect(await row.textContent()).toMatch(/firing\s*critical\s*host\.offline\s*pve-charts\s*pve-charts has sent no heartbeat for \d+ s/);
    await page.screenshot({ path: path.join(shots, 'alerts.png') });

    await page.goto('/settings');
    const form = page.getByTestId('channel-form');
    await form.getByLabel('Name').fill('phone');
    await form.getByLabel('Type').selectOption('ntfy');
    await form.getByLabel('Server').fill(receiver.url);
    await form.getByLabel('Topic').fill('homelab');
    await form.getByLabel('Access token (optional)').fill('tk_secret');
    await form.getByLabel('Quiet hours (optional): from').fill('22:00');
    await form.getByLabel('Quiet hours: until').fill('07:00');
    await form.getByLabel('Quiet hours: time zone').fill('Europe/Berlin');
    await form.getByRole('button', { name: 'Add channel' }).click();
    const channel = page.locator('tr[data-channel="phone"]');
    await expect.poll(() => channel.count()).toBe(1);
    expect(await channel.textContent()).toContain('22:00–07:00 Europe/Berlin');
    await channel.getByRole('button', { name: 'Send a test' }).click();
    await expect.poll(() => page.getByText('Test message sent to phone.').count()).toBe(1);
    expect(receiver.received.at(-1)).toMatchObject({ path: '/homelab', headers: { authorization: 'Bearer tk_secret' } });
    await expect.poll(() => page.getByTestId('deliveries').locator('tbody tr').first().textContent()).toMatch(/phone\s*test\s*sent/);
    // Edited: the topic changes, the stored token is kept without being shown or typed again.
    await channel.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByTestId('channel-edit-form');
    expect(await edit.getByLabel('Topic').inputValue()).toBe('homelab');
    expect(await edit.getByLabel('Access token (optional)').inputValue()).toBe('');
    await edit.getByLabel('Topic').fill('homelab-2');
    await edit.getByRole('button', { name: 'Save channel' }).click();
    await expect.poll(() => page.getByText('Channel “phone” saved.').count()).toBe(1);
    expect(await edit.count()).toBe(0);
    await channel.getByRole('button', { name: 'Send a test' }).click();
    await expect.poll(() => receiver.received.at(-1)?.path).toBe('/homelab-2');
    expect(receiver.received.at(-1)).toMatchObject({ headers: { authorization: 'Bearer tk_secret' } });
    expect(await page.getByTestId('alert-rules').locator('tr[data-rule]').count()).toBe(11);
    expect(await page.content()).not.toContain('tk_secret');
    await page.screenshot({ path: path.join(shots, 'notifications.png'), fullPage: true });
    expect(dash.errors).toEqual([]);
  });
});
