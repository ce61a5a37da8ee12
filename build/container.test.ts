import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../test/helpers/server.js';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createApp } from '../server/app.js';
import { defaultConfig } from '../server/config.js';
import { createListener } from '../server/tls/listen.js';
import { prepareTls } from '../server/tls/setup.js';
import { targets } from './build.mjs';

const root = path.resolve(import.meta.dirname, '..');

interface Instruction {
  keyword: string;
  args: string;
}

/** Dockerfile instructions grouped by stage, with line continuations joined and comments dropped. */
function parseDockerfile(text: string): { from: string; name: string | undefined; steps: Instruction[] }[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const stages: { from: string; name: string | undefined; steps: Instruction[] }[] = [];
  for (const raw of joined.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(\w+)\s+(.*)$/.exec(line);
    if (!match) throw new Error(`unparsable Dockerfile line: ${line}`);
    const keyword = match[1]!.toUpperCase();
    const args = match[2]!.replace(/\s+/g, ' ');
    if (keyword === 'FROM') {
      const [image, as, name] = args.split(' ');
      stages.push({ from: image!, name: as?.toUpperCase() === 'AS' ? name : undefined, steps: [] });
    } else {
      stages.at(-1)!.steps.push({ keyword, args });
    }
  }
  return stages;
}

const stages = parseDockerfile(fs.readFileSync(path.join(root, 'build/Dockerfile'), 'utf8'));
const runtime = stages.at(-1)!;
const build = stages[0]!;
const args = (stage: typeof runtime, keyword: string) => stage.steps.filter((s) => s.keyword === keyword).map((s) => s.args);

describe('the container image recipe', () => {
  it('is multi-stage on Node 24 (Debian bookworm slim), the runtime copying only build output from the build stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.from).toBe('node:24-bookworm-slim');
    expect(build.name).toBe('build');
    const copies = args(runtime, 'COPY');
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) expect(copy).toMatch(/^--from=build /);
  });

  it('builds better-sqlite3 with a toolchain, installs from the lock file, builds, then drops dev dependencies', () => {
    const runs = args(build, 'RUN').join('\n');
    expect(runs).toMatch(/apt-get install .*python3.*make.*g\+\+/);
    expect(runs).toMatch(/npm ci\b/);
    expect(runs).toMatch(/node build\/build\.mjs/);
    expect(runs).toMatch(/npm prune --omit=dev/);
    expect(runs.indexOf('node build/build.mjs')).toBeLessThan(runs.indexOf('npm prune'));
  });

  it('runs the headless server as a non-root user with its database on the /data volume', () => {
    const user = args(runtime, 'USER');
    expect(user).toHaveLength(1);
    expect(user[0]).not.toMatch(/^(root|0)(:|$)/);
    const userIndex = runtime.steps.findIndex((s) => s.keyword === 'USER');
    expect(runtime.steps.findIndex((s) => s.keyword === 'CMD')).toBeGreaterThan(userIndex);
    expect(args(runtime, 'VOLUME')).toEqual(['/data']);
    const env = args(runtime, 'ENV').join(' ');
    expect(env).toContain('HOST=0.0.0.0');
    expect(env).toContain('PORT=3000');
    expect(env).toContain('DB_PATH=/data/homefleet.db');
    expect(args(runtime, 'EXPOSE')).toEqual(['3000']);
    const serverTarget = targets.find((t) => t.name === 'server')!;
    expect(JSON.parse(args(runtime, 'CMD')[0]!)).toEqual(['node', serverTarget.outfile]);
  });

  it('keeps local state and build output out of the build context', () => {
    const ignored = fs.readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    expect(ignored).toEqual(expect.arrayContaining(['.git', 'node_modules', 'dist', 'data', '*.db']));
  });

  describe('its health check', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startServer();
    });
    afterAll(() => server.stop());

    function healthCommand(): string[] {
      const check = args(runtime, 'HEALTHCHECK');
      expect(check).toHaveLength(1);
      const exec = /CMD (\[.*\])$/.exec(check[0]!);
      expect(exec).not.toBeNull();
      return JSON.parse(exec![1]!);
    }

    it('exits 0 while /api/health answers and 1 when nothing listens', async () => {
      const [command, ...rest] = healthCommand();
      expect(command).toBe('node');
      expect(rest.join(' ')).toContain('http://127.0.0.1:');
      expect(rest.join(' ')).toContain('/api/health');
      const port = new URL(server.baseUrl).port;
      const healthy = await execa(command!, rest, { env: { PORT: port }, reject: false, timeout: 10_000 });
      expect(healthy.exitCode).toBe(0);

      const closed = await startServer();
      const closedPort = new URL(closed.baseUrl).port;
      await closed.stop();
      const unhealthy = await execa(command!, rest, { env: { PORT: closedPort }, reject: false, timeout: 10_000 });
      expect(unhealthy.exitCode).toBe(1);
    });

    it('also exits 0 when the server speaks HTTPS itself (FLEET_TLS=on in the container)', async () => {
      const [command, ...rest] = healthCommand();
      const config = defaultConfig({ tls: 'on', host: '127.0.0.1' });
      const tls = (await prepareTls(config))!;
      const app = createApp({ config, tls: tls.info });
      const listener = createListener(app.app, tls).listen(0, '127.0.0.1');
      await once(listener, 'listening');
      try {
        const port = String((listener.address() as AddressInfo).port);
        const healthy = await execa(command!, rest, { env: { PORT: port }, reject: false, timeout: 10_000 });
        expect(healthy.exitCode).toBe(0);
      } finally {
        listener.close();
        await app.close();
      }
    });
  });
});

describe('the sample systemd unit', () => {
  const unit = fs.readFileSync(path.join(root, 'build/homefleet.service'), 'utf8');
  const directives = unit
    .split('\n')
    .filter((l) => /^\w+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const);
  const value = (key: string) => directives.filter(([k]) => k === key).map(([, v]) => v);

  it('runs the built server as a dedicated user with an environment file and hardening', () => {
    expect(value('User')).toEqual(['homefleet']);
    expect(value('ExecStart')[0]).toBe('/usr/bin/node /opt/homefleet/dist/server/main.js');
    expect(value('EnvironmentFile')).toEqual(['-/etc/homefleet/homefleet.env']);
    expect(value('StateDirectory')).toEqual(['homefleet']);
    expect(value('Environment').join(' ')).toContain('DB_PATH=/var/lib/homefleet/homefleet.db');
    for (const [key, expected] of [
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['PrivateDevices', 'yes'],
      ['CapabilityBoundingSet', ''],
      ['RestrictSUIDSGID', 'yes'],
    ] as const) {
      expect(value(key), key).toEqual([expected]);
    }
  });

  it('starts the server again whenever it fails, without giving up', () => {
    expect(value('Restart')).toEqual(['on-failure']);
    expect(value('RestartSec')).toEqual(['2']);
    expect(value('StartLimitIntervalSec')).toEqual(['0']);
  });
  // `systemd-analyze verify` (a Debian tool) runs in `npm run lint` (build/lint.mjs).
});
