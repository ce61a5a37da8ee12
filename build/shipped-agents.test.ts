// The server reads the host agent, its installer, the helpers it inlines and the kept older agents
// from its package folder at run time (server/services.ts: reporter/ and build/agents/). Both the
// container image and the desktop archive must carry every one of them, or /install/agent.sh and
// the release manifest break only where the product is installed, never in a test of the sources.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { AGENT_FILE, INSTALLER_FILE } from '../server/releases/releases.js';

const root = path.resolve(import.meta.dirname, '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** Every file the server may read from its package folder to serve the agents, relative to it. */
const served = [
  `reporter/${AGENT_FILE}`,
  `reporter/${INSTALLER_FILE}`,
  ...fs.readdirSync(path.join(root, 'reporter/lib')).map((file) => `reporter/lib/${file}`),
  // A kept version, as build/agents/README.md says to keep one.
  'build/agents/1.0.0/host-agent.sh',
];

/** A glob as both recipes write them: `*` within a name, `**` across folders, a trailing `/` a whole folder. */
function covers(pattern: string, file: string): boolean {
  const glob = pattern.endsWith('/') ? `${pattern}**` : pattern;
  const source = glob
    .split(/(\*\*|\*)/)
    .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`).test(file);
}

describe('what the server serves to fleet machines is shipped', () => {
  it('by the container image: a COPY from the build stage for each file', () => {
    const copies = read('build/Dockerfile')
      .split('\n')
      .filter((line) => line.startsWith('COPY --from=build /app/'))
      .map((line) => line.split(/\s+/)[2]!.slice('/app/'.length));
    for (const file of served) expect(copies.some((source) => covers(source, file)), file).toBe(true);
    // The folder exists in every clone (its README), so the COPY cannot fail on a fresh checkout.
    expect(fs.existsSync(path.join(root, 'build/agents/README.md'))).toBe(true);
  });

  it('by the desktop archive: a pattern of electron-builder files for each file', () => {
    const patterns = (YAML.parse(read('build/electron-builder.yml')) as { files: string[] }).files.filter((f) => !f.startsWith('!'));
    for (const file of served) expect(patterns.some((pattern) => covers(pattern, file)), file).toBe(true);
  });

  it('the check itself tells a covered file from one that is not', () => {
    expect(covers('reporter/*.sh', 'reporter/host-agent.sh')).toBe(true);
    expect(covers('reporter/*.sh', 'reporter/lib/common.sh')).toBe(false);
    expect(covers('reporter/lib/', 'reporter/lib/common.sh')).toBe(true);
    expect(covers('build/agents/**', 'build/agents/1.0.0/host-agent.sh')).toBe(true);
    expect(covers('dist/server/**', 'build/agents/1.0.0/host-agent.sh')).toBe(false);
  });
});
