// End to end, release channels (PRODUCT.md "Release channels"): the built server in its own process
// ships the repository's agent (stable) and a pre-release of it under build/agents/<version>/, as a
// release does; the real installer it serves installs the real agent (fake qm/pct/pvesh/systemctl on
// PATH, a temp --root), which follows its host's channel: the stable agent first, the pre-release
// only once the host is on beta, verified and accepted by the heartbeat rule. The agent also takes
// its collectors from the heartbeat answer.
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from './helpers/built-server.js';
import { TestClient } from './helpers/http.js';
import { packageShipping, servedAgent } from './helpers/shipped-agents.js';
import { installAgent } from './helpers/real-agent.js';

const root = path.resolve(import.meta.dirname, '..');
const SETUP_TOKEN = 'channels-e2e-setup-token-0123456789';
const PASSWORD = 'channels-e2e-password';
const STABLE = /^HOMEFLEET_AGENT_VERSION="([^"]+)"$/m.exec(fs.readFileSync(path.join(root, 'reporter/host-agent.sh'), 'utf8'))![1]!;
const BETA = `${STABLE.split('-')[0]!.replace(/\d+$/, (patch) => String(Number(patch) + 1))}-beta.1`;

let server: BuiltServer;
let admin: TestClient;
let dir: string;
let packageDir: string;
let hostRoot: string;
let env: Record<string, string>;
const installedAgent = () => path.join(hostRoot, 'usr/local/lib/homefleet-agent/host-agent.sh');

const agentOnce = () =>
  execa('bash', [installedAgent(), '--root', hostRoot, '--once'], { env, extendEnv: false, reject: false, timeout: 30_000 });

async function until(condition: () => Promise<boolean> | boolean, ms: number) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`condition not met within ${ms} ms`);
}

beforeAll(async () => {
  packageDir = await packageShipping({ kept: { [BETA]: servedAgent(BETA) } });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-channels-e2e-'));
  hostRoot = path.join(dir, 'root');
  fs.mkdirSync(path.join(hostRoot, 'etc'), { recursive: true });
  fs.writeFileSync(path.join(hostRoot, 'etc/machine-id'), 'e2e0123456789abcdef0123456channels\n');
  fs.writeFileSync(path.join(hostRoot, 'etc/hostname'), 'pve-channels\n');
  env = {
    PATH: `${path.join(root, 'reporter/test/fixtures/agent-bin')}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    HOME: dir,
    TMPDIR: dir,
    FAKE_SYSTEMCTL_LOG: path.join(dir, 'systemctl.log'),
    HOMEFLEET_INTERVAL_MIN_S: '1',
    HOMEFLEET_CURL_MAX_TIME: '5',
  };
  server = await startBuiltServer(agentServerEnv(dir, SETUP_TOKEN), [], packageDir);
  admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);
}, 120_000);

afterAll(async () => {
  // Units the fake systemctl started (the watchdog, the restarted agent) run in their own sessions.
  for (const file of fs.existsSync(hostRoot) ? fs.readdirSync(hostRoot).filter((f) => f.endsWith('.pid')) : []) {
    try {
      process.kill(-Number(fs.readFileSync(path.join(hostRoot, file), 'utf8')), 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(packageDir, { recursive: true, force: true });
});

describe('the real agent follows its host release channel', { timeout: 90_000 }, () => {
  it('installs the stable agent, is moved to the pre-release only once on beta, and takes its collectors', async () => {
    const token = (await admin.post('/api/hosts/enrollment-tokens', { name: 'channels' })).body.token as string;
    await installAgent(server.url, token, hostRoot, env);
    // A new host follows the stable channel: the installer takes the stable agent, not the newer pre-release.
    expect(fs.readFileSync(installedAgent(), 'utf8')).toContain(`HOMEFLEET_AGENT_VERSION="${STABLE}"`);
    expect((await agentOnce()).exitCode).toBe(0);
    const [host] = (await admin.get('/api/hosts')).body as { id: number }[];
    const detail = async () => (await admin.get(`/api/hosts/${host!.id}`)).body;
    expect(await detail()).toMatchObject({ agent_version: STABLE, agent_channel: 'stable', upgrade_available: false, upgrade_to: null });
    expect(await admin.post(`/api/hosts/${host!.id}/upgrade`, { version: BETA })).toMatchObject({ status: 409 });

    expect((await admin.patch(`/api/hosts/${host!.id}`, { agent_channel: 'beta' })).body).toMatchObject({ agent_channel: 'beta', upgrade_available: true, upgrade_to: BETA });
    expect((await admin.post(`/api/hosts/${host!.id}/upgrade`, {})).status).toBe(202);
    // The fake systemctl really runs the watchdog unit, with a bound well above this test's run.
    env.FAKE_SYSTEMCTL_ROOT = hostRoot;
    env.HOMEFLEET_UPGRADE_TIMEOUT_S = '30';
    const run = await agentOnce();
    expect(run.exitCode, run.stderr).toBe(0);
    expect(fs.readFileSync(installedAgent(), 'utf8')).toBe(servedAgent(BETA));
    await until(async () => (await detail()).upgrade?.state === 'succeeded', 10_000);
    expect(await detail()).toMatchObject({ agent_version: BETA, upgrade: { state: 'succeeded', version: BETA, from: STABLE }, upgrade_available: false });
    await until(() => !fs.existsSync(path.join(hostRoot, 'etc/homefleet-agent/upgrade')), 10_000);

    // Pinned, the host is not moved back to stable by an upgrade asked for without a version.
    expect((await admin.patch(`/api/hosts/${host!.id}`, { agent_pin: BETA })).status).toBe(200);
    expect(await admin.post(`/api/hosts/${host!.id}/upgrade`, { version: STABLE, rollback: true })).toMatchObject({ status: 409, body: { error: expect.stringContaining(`pinned to agent ${BETA}`) } });

    // Collectors: the next answer turns configs off, and the agent keeps that word.
    expect((await admin.patch(`/api/hosts/${host!.id}`, { collectors: { configs: false } })).status).toBe(200);
    delete env.FAKE_SYSTEMCTL_ROOT;
    const after = await agentOnce();
    expect(after.exitCode, after.stderr).toBe(0);
    expect(after.stderr).toContain('collectors: configs=off');
    expect(fs.readFileSync(path.join(hostRoot, 'etc/homefleet-agent/collectors'), 'utf8')).toBe('metrics=1\nconfigs=0\nstorage=1\nbackups=1\n');
  });
});
