import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey, verify } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { agentDir, enrolledHost, startHostServer, writeAgent } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';
import { compareVersions } from '../contract/versions.js';
import { agentVersionOf, KEY_FILE } from './releases.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-releases-'));

describe('agentVersionOf', () => {
  it('reads HOMEFLEET_AGENT_VERSION near the top of the script, or the header comment', () => {
    expect(agentVersionOf('#!/bin/bash\nset -euo pipefail\nHOMEFLEET_AGENT_VERSION="1.2.3"\n')).toBe('1.2.3');
    expect(agentVersionOf("readonly HOMEFLEET_AGENT_VERSION='0.1.0-rc.1'\n")).toBe('0.1.0-rc.1');
    expect(agentVersionOf('# homefleet-agent-version: 2.0.0\n')).toBe('2.0.0');
    expect(agentVersionOf('HOMEFLEET_AGENT_VERSION="$(cat v)"\n')).toBeUndefined();
  });

  it('compares versions numerically', () => {
    expect(compareVersions('1.10.0', '1.9.9')).toBeGreaterThan(0);
    expect(compareVersions('1.0.0-rc.1', '1.0.0')).toBeLessThan(0);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
  });
});

describe('the signed release manifest', () => {
  it('lists the current agent first and the kept versions, with checksums, sizes, relative URLs and channels', async () => {
    const dir = agentDir('1.2.0');
    const kept = path.join(dir, 'kept');
    writeAgent(path.join(kept, '1.0.0'), '1.0.0');
    writeAgent(path.join(kept, '1.1.0'), '1.1.0');
    writeAgent(path.join(kept, '1.3.0-beta.1'), '1.3.0-beta.1');
    writeAgent(path.join(kept, '9.9.9'), '1.1.5'); // the folder and the script disagree: left out
    server = await startHostServer({ clock: manualClock(Date.parse('2026-11-22T10:30:00Z')), hosts: { agentDir: dir, keptAgentsDir: kept } });
    const res = await server.anonymous().get('/api/agent/releases/manifest.json');
    expect(res.status).toBe(200);
    const current = fs.readFileSync(path.join(dir, 'host-agent.sh'));
    expect(res.body).toEqual({
      manifest_version: 1,
      agents: [
        {
          version: '1.2.0',
          url: '/api/agent/releases/1.2.0/host-agent.sh',
          sha256: createHash('sha256').update(current).digest('hex'),
          size: current.length,
          min_controller_version: '0.1.0',
          upgradable_from: '0.0.0',
          channel: 'stable',
        },
        // A pre-release part makes a version beta.
        expect.objectContaining({ version: '1.3.0-beta.1', url: '/api/agent/releases/1.3.0-beta.1/host-agent.sh', channel: 'beta' }),
        expect.objectContaining({ version: '1.1.0', url: '/api/agent/releases/1.1.0/host-agent.sh', channel: 'stable' }),
        expect.objectContaining({ version: '1.0.0', channel: 'stable' }),
      ],
      issued_at: '2026-11-22T00:00:00.000Z',
      expires_at: '2026-11-29T00:00:00.000Z',
    });
    for (const agent of res.body.agents) {
      const file = await server.anonymous().get(agent.url);
      expect(createHash('sha256').update(file.text).digest('hex')).toBe(agent.sha256);
    }
  });

  it('serves the agent and the installer with their helpers (lib/) inlined, and describes the bytes it serves', async () => {
    const dir = agentDir('1.2.0');
    const include = 'source "${BASH_SOURCE[0]%/*}/lib/common.sh" # homefleet:include';
    fs.writeFileSync(path.join(dir, 'host-agent.sh'), `#!/usr/bin/env bash\nHOMEFLEET_AGENT_VERSION="1.2.0"\n${include}\nhelper\n`);
    fs.writeFileSync(path.join(dir, 'install-agent.sh'), `#!/usr/bin/env bash\nHOMEFLEET_SERVER_DEFAULT=""\n${include}\n`);
    fs.mkdirSync(path.join(dir, 'lib'));
    fs.writeFileSync(path.join(dir, 'lib', 'common.sh'), 'helper() { echo one copy; }\n');
    const kept = path.join(dir, 'kept');
    // A kept copy that still includes a helper cannot run alone: it is not offered.
    fs.mkdirSync(path.join(kept, '1.1.0'), { recursive: true });
    fs.writeFileSync(path.join(kept, '1.1.0', 'host-agent.sh'), `HOMEFLEET_AGENT_VERSION="1.1.0"\n${include}\n`);
    server = await startHostServer({ hosts: { agentDir: dir, keptAgentsDir: kept } });
    const assembled = '#!/usr/bin/env bash\nHOMEFLEET_AGENT_VERSION="1.2.0"\nhelper() { echo one copy; }\nhelper\n';
    expect((await server.anonymous().get('/api/agent/releases/1.2.0/host-agent.sh')).text).toBe(assembled);
    const manifest = (await server.anonymous().get('/api/agent/releases/manifest.json')).body;
    expect(manifest.agents).toEqual([
      expect.objectContaining({ version: '1.2.0', sha256: createHash('sha256').update(assembled).digest('hex'), size: Buffer.byteLength(assembled) }),
    ]);
    expect((await server.anonymous().get('/install/agent.sh')).text).toBe(`#!/usr/bin/env bash\nHOMEFLEET_SERVER_DEFAULT=${server.baseUrl}\nhelper() { echo one copy; }\n`);

    // A changed helper is served at once (the files' stamps include lib/).
    fs.writeFileSync(path.join(dir, 'lib', 'common.sh'), 'helper() { echo changed; }\n');
    expect((await server.anonymous().get('/api/agent/releases/1.2.0/host-agent.sh')).text).toContain('echo changed');
  });

  it('is signed with the key the agent pins at enrollment; openssl verifies it as documented', async () => {
    server = await startHostServer();
    const { manifest_public_key } = await enrolledHost(server);
    const manifest = Buffer.from(await (await fetch(`${server.baseUrl}/api/agent/releases/manifest.json`)).arrayBuffer());
    const sigText = await (await fetch(`${server.baseUrl}/api/agent/releases/manifest.json.sig`)).text();
    expect(sigText).toMatch(/^[A-Za-z0-9+/]{86}==\n$/);
    const signature = Buffer.from(sigText, 'base64');
    expect(verify(null, manifest, createPublicKey(manifest_public_key), signature)).toBe(true);

    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'key.pem'), manifest_public_key);
    fs.writeFileSync(path.join(dir, 'manifest.json'), manifest);
    fs.writeFileSync(path.join(dir, 'manifest.sig'), signature);
    const openssl = (file: string) =>
      execFileSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', 'key.pem', '-rawin', '-in', file, '-sigfile', 'manifest.sig'], {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    expect(openssl('manifest.json')).toContain('Signature Verified Successfully');
    // One changed byte and the signature no longer holds.
    fs.writeFileSync(path.join(dir, 'tampered.json'), manifest.toString().replace('"manifest_version": 1', '"manifest_version": 2'));
    expect(() => openssl('tampered.json')).toThrow();
  });

  it('keeps its signing key beside the database (mode 0600), the same across restarts, never in an export', async () => {
    const dir = tmp();
    const dbPath = path.join(dir, 'homefleet.db');
    server = await startHostServer({ dbPath });
    const first = (await enrolledHost(server)).manifest_public_key;
    const keyFile = path.join(dir, KEY_FILE);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    const pem = fs.readFileSync(keyFile, 'utf8');
    expect(pem).toContain('BEGIN PRIVATE KEY');
    const exported = await server.client.get('/api/export');
    expect(exported.text).not.toContain(pem.split('\n')[1]);
    await server.stop();
    server = await startHostServer({ dbPath });
    expect((await enrolledHost(server)).manifest_public_key).toBe(first);
  });

  it('manifest.json and its .sig agree byte for byte across requests', async () => {
    server = await startHostServer();
    const a = await server.anonymous().get('/api/agent/releases/manifest.json');
    const b = await server.anonymous().get('/api/agent/releases/manifest.json');
    expect(a.text).toBe(b.text);
    expect((await server.anonymous().get('/api/agent/releases/manifest.json.sig')).text).toBe(
      (await server.anonymous().get('/api/agent/releases/manifest.json.sig')).text,
    );
  });

  it('is an empty list, still signed, when no agent ships', async () => {
    server = await startHostServer({ hosts: { agentDir: tmp() } });
    const res = await server.anonymous().get('/api/agent/releases/manifest.json');
    expect(res.body.agents).toEqual([]);
  });
});
