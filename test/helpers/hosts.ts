import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AppOptions } from '../../server/app.js';
import type { TestClient, TestResponse } from './http.js';
import { startServer, type TestServer } from './server.js';

/** A folder standing in for reporter/: a placeholder agent of `version` and an installer. */
export function agentDir(version = '1.0.0', options: { installer?: boolean } = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-agent-'));
  writeAgent(dir, version);
  if (options.installer !== false) {
    fs.writeFileSync(path.join(dir, 'install-agent.sh'), '#!/usr/bin/env bash\nset -euo pipefail\nHOMEFLEET_SERVER_DEFAULT=""\necho "installer"\n');
  }
  return dir;
}

export function writeAgent(dir: string, version: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'host-agent.sh');
  fs.writeFileSync(file, `#!/usr/bin/env bash\nset -euo pipefail\nHOMEFLEET_AGENT_VERSION="${version}"\necho "agent ${version}"\n`);
  return file;
}

/** The app with agents allowed over plain HTTP (loopback tests) and a placeholder agent. */
export function startHostServer(options: AppOptions = {}): Promise<TestServer> {
  return startServer({
    ...options,
    hosts: { agentDir: agentDir(), keptAgentsDir: path.join(os.tmpdir(), 'homefleet-no-kept-agents'), ...options.hosts },
    config: { agentAllowHttp: true, ...options.config },
  });
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let machineSerial = 0;

export function heartbeatBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agent_version: '1.0.0',
    started_at: '2026-11-22T09:00:00Z',
    hostname: 'pve1',
    addresses: ['192.0.2.10'],
    uptime_s: 3600,
    hypervisor_version: 'pve-manager/8.2.4',
    guests: [],
    ...overrides,
  };
}

export interface Enrolled {
  host_id: number;
  host_token: string;
  heartbeat_interval_s: number;
  manifest_public_key: string;
}

/** An enrollment token made by the administrator's browser. */
export async function enrollmentToken(server: TestServer, body: Record<string, unknown> = {}): Promise<string> {
  const res = await server.client.post('/api/hosts/enrollment-tokens', body);
  if (res.status !== 201) throw new Error(`enrollment token: ${res.status} ${res.text}`);
  return res.body.token as string;
}

export function enroll(client: TestClient, token: string, body: Record<string, unknown> = {}): Promise<TestResponse> {
  return client.post('/api/agent/enroll', { hostname: 'pve1', machine_id: `machine-${++machineSerial}`, agent_version: '1.0.0', ...body }, bearer(token));
}

/** A host enrolled end to end through the API. */
export async function enrolledHost(server: TestServer, body: Record<string, unknown> = {}): Promise<Enrolled> {
  const res = await enroll(server.anonymous(), await enrollmentToken(server), body);
  if (res.status !== 201) throw new Error(`enroll: ${res.status} ${res.text}`);
  return res.body as Enrolled;
}

export function heartbeat(server: TestServer, hostToken: string, overrides: Record<string, unknown> = {}): Promise<TestResponse> {
  return server.anonymous().post('/api/agent/heartbeat', heartbeatBody(overrides), bearer(hostToken));
}
