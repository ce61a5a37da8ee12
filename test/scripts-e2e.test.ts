// End to end, scripts: the real installer (as the server serves it) and the real bash agent, with
// fake qm/pct on PATH that log their argument lists and what they read on stdin, against the real
// server on 127.0.0.1. A script run is queued as campaigns queue it (operations.scripts.request:
// PRODUCT.md "A script runs only in a campaign"), and the agent takes it with its next heartbeat.
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers/server.js';

const root = path.resolve(import.meta.dirname, '..');
const fakeBin = path.join(root, 'reporter/test/fixtures/agent-bin');

let server: TestServer;
let dir: string;
let env: Record<string, string>;

/** A host root with its own machine id, the served installer run in it with `args`, and one heartbeat. */
async function installedHost(name: string, args: string[]): Promise<{ root: string; hostId: number }> {
  const hostRoot = path.join(dir, name);
  fs.mkdirSync(path.join(hostRoot, 'etc'), { recursive: true });
  fs.writeFileSync(path.join(hostRoot, 'etc/machine-id'), `${name.padEnd(32, '0')}\n`);
  fs.writeFileSync(path.join(hostRoot, 'etc/hostname'), `${name}\n`);
  const token = (await server.client.post('/api/hosts/enrollment-tokens', { name })).body.token as string;
  const installed = await execa(
    'bash',
    ['-c', 'set -o pipefail; curl -fsSL "$1/install/agent.sh" | bash -s -- --token "$2" --root "$3" "${@:4}"', 'install', server.baseUrl, token, hostRoot, ...args],
    { env, extendEnv: false, reject: false, timeout: 30_000 },
  );
  expect(installed.exitCode, installed.stderr).toBe(0);
  await agentOnce(hostRoot);
  const host = (await server.client.get('/api/hosts')).body.find((h: { hostname: string }) => h.hostname === name);
  expect(host).toMatchObject({ status: 'online', guest_count: 4 });
  return { root: hostRoot, hostId: host.id };
}

async function agentOnce(hostRoot: string) {
  const agent = path.join(hostRoot, 'usr/local/lib/homefleet-agent/host-agent.sh');
  const run = await execa('bash', [agent, '--root', hostRoot, '--once'], { env, extendEnv: false, reject: false, timeout: 30_000 });
  expect(run.exitCode, run.stderr).toBe(0);
}

const operation = async (id: string) => (await server.client.get(`/api/operations/${id}`)).body;
const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');

beforeAll(async () => {
  server = await startServer({ config: { agentAllowHttp: true } });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-scripts-e2e-'));
  env = {
    PATH: `${fakeBin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    HOME: dir,
    TMPDIR: dir,
    FAKE_SYSTEMCTL_LOG: path.join(dir, 'systemctl.log'),
    FAKE_PVE_LOG: path.join(dir, 'pve.log'),
    FAKE_PVE_STDIN: path.join(dir, 'stdin'),
    HOMEFLEET_INTERVAL_MIN_S: '1',
    HOMEFLEET_CURL_MAX_TIME: '5',
  };
}, 60_000);

afterAll(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('scripts run by the real agent', { timeout: 90_000 }, () => {
  it('into a container: pct exec <vmid> -- bash -s with the body on stdin; on the host of an agent installed without --allow-scripts: the spec’s message, nothing run', async () => {
    const { root: hostRoot, hostId } = await installedHost('pve-scripts', []);
    expect((await server.client.get(`/api/hosts/${hostId}`)).body.allows_scripts).toBe(false);
    const marker = path.join(dir, 'host-script-ran');
    const body = `#!/bin/bash\nset -eu\napt-get -y upgrade\necho "patched \\"$(hostname)\\""\n`;
    const patch = await server.client.post('/api/scripts', { name: 'patch', runs_on: 'guest', interpreter: 'bash', body });
    const onHost = await server.client.post('/api/scripts', { name: 'host marker', runs_on: 'host', interpreter: 'bash', body: `touch ${marker}\n` });
    expect([patch.status, onHost.status]).toEqual([201, 201]);

    const inContainer = server.operations.scripts.request(hostId, 200, patch.body.id, undefined, { actor: 'admin' });
    await agentOnce(hostRoot);
    expect(read(env.FAKE_PVE_LOG!)).toBe('pct exec 200 -- bash -s \n');
    expect(read(env.FAKE_PVE_STDIN!)).toBe(`--- pct exec 200 -- bash -s \n${body}`);
    expect(await operation(inContainer.operation_id)).toMatchObject({ type: 'script', vmid: 200, status: 'succeeded', exit_code: 0 });

    const onTheHost = server.operations.scripts.request(hostId, null, onHost.body.id, undefined, { actor: 'admin' });
    await agentOnce(hostRoot);
    expect(await operation(onTheHost.operation_id)).toMatchObject({ type: 'script', vmid: null, status: 'failed', exit_code: 126, output: 'scripts are not allowed on this host' });
    expect(fs.existsSync(marker)).toBe(false);
    expect(read(env.FAKE_PVE_LOG!)).toBe('pct exec 200 -- bash -s \n');
  });

  it('on the host of an agent installed with --allow-scripts, the body runs under its interpreter', async () => {
    const { root: hostRoot, hostId } = await installedHost('pve-allowed', ['--allow-scripts']);
    expect((await server.client.get(`/api/hosts/${hostId}`)).body.allows_scripts).toBe(true);
    const marker = path.join(dir, 'allowed-script-ran');
    const script = await server.client.post('/api/scripts', { name: 'allowed marker', runs_on: 'host', interpreter: 'sh', body: `touch ${marker}\necho done\n` });
    const run = server.operations.scripts.request(hostId, null, script.body.id, 60, { actor: 'admin' });
    await agentOnce(hostRoot);
    expect(await operation(run.operation_id)).toMatchObject({ status: 'succeeded', exit_code: 0, output: 'done\n' });
    expect(fs.existsSync(marker)).toBe(true);
  });
});
