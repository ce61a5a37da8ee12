import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { execa } from 'execa';
import { expect } from 'vitest';

/**
 * The real agent on a pretend Proxmox node (its own root folder): installed as the README's one-liner
 * installs it (`curl <server>/install/agent.sh | bash -s -- --token … --root …`) with only `env` in
 * its environment (fake pvesh/qm/pct on its PATH), then run looping as its systemd service runs it.
 */
export async function installAgent(serverUrl: string, token: string, root: string, env: Record<string, string>, args: string[] = []): Promise<void> {
  const installed = await execa('bash', ['-c', 'set -o pipefail; curl -fsSL "$1/install/agent.sh" | bash -s -- --token "$2" --root "$3" "${@:4}"', 'install', serverUrl, token, root, ...args], {
    env,
    extendEnv: false,
    reject: false,
    timeout: 30_000,
  });
  expect(installed.exitCode, installed.stderr).toBe(0);
}

/** The installed agent looping in its own process group (kill it with `process.kill(-agent.pid)`). */
export function spawnAgent(root: string, env: Record<string, string>): ChildProcess {
  return spawn('bash', [path.join(root, 'usr/local/lib/homefleet-agent/host-agent.sh'), '--root', root], { env, detached: true, stdio: 'ignore' });
}
