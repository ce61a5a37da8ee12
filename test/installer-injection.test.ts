import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';

// Attack review (issue 25): with TRUST_PROXY set and no FLEET_PUBLIC_URL, X-Forwarded-Proto landed
// inside the installer's HOMEFLEET_SERVER_DEFAULT='…' and inside install_command.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-installer-injection-'));
const SETUP_TOKEN = 'installer-injection-setup-token';

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a forged X-Forwarded-Proto behind TRUST_PROXY (built server)', () => {
  it('is not believed: the served installer, run with real bash --help, runs nothing, and install_command holds no injection', async () => {
    const marker = path.join(dir, 'PWNED');
    const forged = `x';touch ${marker};'`;
    const server = await startHeadless({ DB_PATH: path.join(dir, 'homefleet.db'), TRUST_PROXY: 'loopback', FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' });

    const served = await rawRequest(server.url, 'GET', '/install/agent.sh', { 'x-forwarded-proto': forged });
    expect(served.status).toBe(200);
    const script = path.join(dir, 'agent.sh');
    fs.writeFileSync(script, served.body as string);
    const help = await execa('bash', [script, '--help'], { cwd: dir, reject: false });
    expect(help.exitCode).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    expect((served.body as string).split('\n')).toContain(`HOMEFLEET_SERVER_DEFAULT=${server.url}`);

    const cookie = await setUpAdmin(server.url, SETUP_TOKEN);
    const created = await rawRequest(server.url, 'POST', '/api/hosts/enrollment-tokens', { cookie, origin: server.url, 'x-forwarded-proto': forged }, {});
    expect(created.status).toBe(201);
    const command = created.body.install_command as string;
    expect(command).toBe(`curl -fsSL ${server.url}/install/agent.sh | bash -s -- --token ${created.body.token}`);
    // The command as a person pastes it, through real bash, with curl and bash standing in: the
    // arguments arrive as written and nothing else runs.
    const pasted = await execa('bash', ['-c', `curl() { printf '%s\\n' "$@" >"${dir}/curl-args"; }; bash() { printf '%s\\n' "$@" >"${dir}/bash-args"; }; ${command}`], { cwd: dir, reject: false });
    expect(pasted.exitCode).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'curl-args'), 'utf8')).toBe(`-fsSL\n${server.url}/install/agent.sh\n`);
    expect(fs.readFileSync(path.join(dir, 'bash-args'), 'utf8')).toBe(`-s\n--\n--token\n${created.body.token}\n`);

    // A real proxy's https is still believed.
    const proxied = await rawRequest(server.url, 'GET', '/install/agent.sh', { 'x-forwarded-proto': 'https' });
    expect((proxied.body as string).split('\n')).toContain(`HOMEFLEET_SERVER_DEFAULT=${server.url.replace(/^http:/, 'https:')}`);
    expect((await server.stop()).exitCode).toBe(0);
  });

  it('refuses to start on a public URL that a shell would read as more than a URL', async () => {
    for (const value of ["https://fleet.example.org';touch /tmp/x;'", 'https://fleet.example.org;id', 'https://$(id).example.org']) {
      const result = await execa(process.execPath, ['dist/server/main.js'], { cwd: path.resolve(import.meta.dirname, '..'), env: { FLEET_PUBLIC_URL: value, DB_PATH: ':memory:' }, extendEnv: false, reject: false });
      expect(result.exitCode, value).toBe(1);
      expect(result.stderr.trim(), value).toMatch(/^homefleet: Invalid FLEET_PUBLIC_URL \(got ".*"\): must be an https:\/\/ origin/);
    }
  });
});
