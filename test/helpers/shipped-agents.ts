import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assembleScript } from '../../server/releases/assemble.js';
import { ensureBuilt } from './build.js';

const root = path.resolve(import.meta.dirname, '../..');

/** reporter/host-agent.sh as the server serves it (its helpers inlined), under `version` when given. */
export function servedAgent(version?: string): string {
  const text = assembleScript(fs.readFileSync(path.join(root, 'reporter/host-agent.sh'), 'utf8'), (file) => fs.readFileSync(path.join(root, 'reporter', file), 'utf8'));
  return version === undefined ? text : text.replace(/^HOMEFLEET_AGENT_VERSION=.*$/m, `HOMEFLEET_AGENT_VERSION="${version}"`);
}

/**
 * A package folder of its own for the built server (`startBuiltServer(env, [], folder)`): a copy of
 * dist/server, which finds reporter/ and build/agents/ beside the package.json above it, with the
 * agents given: `current` as reporter/host-agent.sh (the repository's when absent; the installer and
 * helpers are always the repository's), and each of `kept` as build/agents/<version>/host-agent.sh,
 * as a release ships a pre-release agent. node_modules is the repository's (the SQLite addon).
 */
export async function packageShipping(agents: { current?: string; kept?: Record<string, string> }): Promise<string> {
  await ensureBuilt();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-package-'));
  fs.copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
  // Copied, not linked: Node resolves a linked module to its real path, which would be this repository.
  fs.cpSync(path.join(root, 'dist/server'), path.join(dir, 'dist/server'), { recursive: true, filter: (src) => !src.endsWith('.map') });
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  fs.mkdirSync(path.join(dir, 'reporter'));
  fs.cpSync(path.join(root, 'reporter/lib'), path.join(dir, 'reporter/lib'), { recursive: true });
  fs.copyFileSync(path.join(root, 'reporter/install-agent.sh'), path.join(dir, 'reporter/install-agent.sh'));
  if (agents.current === undefined) fs.copyFileSync(path.join(root, 'reporter/host-agent.sh'), path.join(dir, 'reporter/host-agent.sh'));
  else fs.writeFileSync(path.join(dir, 'reporter/host-agent.sh'), agents.current);
  for (const [version, script] of Object.entries(agents.kept ?? {})) {
    fs.mkdirSync(path.join(dir, 'build/agents', version), { recursive: true });
    fs.writeFileSync(path.join(dir, 'build/agents', version, 'host-agent.sh'), script);
  }
  return dir;
}
