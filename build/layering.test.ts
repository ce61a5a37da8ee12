import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const config = path.join(root, 'build', 'dependency-cruiser.cjs');
const bin = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}

/** Runs dependency-cruiser with the project's rules on `folders` of `cwd`: the violations it found, and as text. */
async function cruise(cwd: string, folders: string[]): Promise<{ violations: Violation[]; text: string }> {
  const result = await execa(process.execPath, [bin, '--config', config, '--output-type', 'json', ...folders], { cwd });
  const output = JSON.parse(result.stdout) as { summary: { violations: Violation[] } };
  const violations = output.summary.violations;
  const text = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.cycle ? v.cycle.map((c) => c.name).join(' → ') : v.to}`).join('\n');
  return { violations, text };
}

describe('the layers of the source tree (build/dependency-cruiser.cjs)', () => {
  it('hold: features stand on the kernel and the contract, the dashboard reads only the contract, no cycles', async () => {
    const { text } = await cruise(root, ['server', 'renderer', 'electron']);
    // A failure shows the list of violations, each with its rule: what to fix, and where.
    expect(text, 'dependency-cruiser found arrows against the rules').toBe('');
    // 5 s alone; well over the default 20 s beside the rest of npm test on a loaded two-core machine.
  }, 60_000);

  describe('fail on a tree that breaks them', () => {
    // Inside the repository, so npm packages resolve from its node_modules as they do for the real tree.
    fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
    const tree = fs.mkdtempSync(path.join(root, 'dist', '.test-layering-'));
    afterAll(() => fs.rmSync(tree, { recursive: true, force: true }));

    const files: Record<string, string> = {
      'server/contract/wire.ts': 'export interface Thing { id: number }\n',
      'server/contract/zod.ts': "import * as z from 'zod';\nexport const Thing = z.object({ id: z.number() });\n",
      'server/errors.ts': 'export const notFound = () => new Error("not found");\n',
      'server/http/routes.ts': "import { count } from '../usage/a';\nexport const routes = count;\n",
      'server/registry/schema.ts': "import * as z from 'zod';\nimport type { Thing } from '../contract/wire';\nexport const Name = z.string();\nexport type T = Thing;\n",
      'server/registry/service.ts': "import { notFound } from '../errors';\nimport { Name } from './schema';\nexport const registry = { notFound, Name };\n",
      'server/jobs/service.ts': "import { registry } from '../registry/service';\nexport const jobs = registry;\n",
      'server/usage/a.ts': "import { b } from './b';\nexport const count = () => b;\n",
      'server/usage/b.ts': "import { count } from './a';\nexport const b = typeof count;\n",
      'server/telemetry/routes.ts': "import { registry } from '../registry/service';\nexport const telemetry = registry;\n",
      'renderer/page.ts': "import type { Thing } from '../server/contract/wire';\nimport { Name } from '../server/registry/schema';\nexport const page = (t: Thing) => Name.parse(t);\n",
    };
    let found: Awaited<ReturnType<typeof cruise>>;
    beforeAll(async () => {
      for (const [file, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
        fs.writeFileSync(path.join(tree, file), text);
      }
      found = await cruise(tree, ['server', 'renderer']);
    });
    const has = (rule: string, from: string, to: string) => found.violations.some((v) => v.rule.name === rule && v.from === from && v.to === to);

    it('on a renderer import of the server outside server/contract/', () => {
      expect(has('renderer-imports-only-contract', 'renderer/page.ts', 'server/registry/schema.ts'), found.text).toBe(true);
      expect(found.violations.filter((v) => v.from === 'renderer/page.ts' && v.to === 'server/contract/wire.ts')).toEqual([]);
    });
    it('on a cycle', () => {
      expect(found.violations.some((v) => v.rule.name === 'no-circular' && v.from === 'server/usage/a.ts'), found.text).toBe(true);
    });
    it('on an arrow from the kernel up into a feature', () => {
      expect(has('kernel-imports-no-feature', 'server/http/routes.ts', 'server/usage/a.ts'), found.text).toBe(true);
    });
    it('on an arrow between features that the rules do not allow, and not on one they allow (jobs → registry)', () => {
      expect(has('feature-imports-only-kernel-contract', 'server/telemetry/routes.ts', 'server/registry/service.ts'), found.text).toBe(true);
      expect(found.violations.filter((v) => v.from === 'server/jobs/service.ts')).toEqual([]);
    });
    it('on the contract importing anything but the contract (zod)', () => {
      expect(found.violations.some((v) => v.rule.name === 'contract-imports-only-contract' && v.from === 'server/contract/zod.ts'), found.text).toBe(true);
    });
  });
});
