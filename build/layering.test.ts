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
      'server/contract/inputs/thing.ts': "import * as z from 'zod';\nimport type { Thing } from '../wire';\nexport const ThingBody = z.object({ id: z.number() });\nexport type ThingBody = z.output<typeof ThingBody> & Thing;\n",
      'server/contract/inputs/node.ts': "import { isIP } from 'node:net';\nimport { notFound } from '../../errors';\nexport const ip = { isIP, notFound };\n",
      'server/contract/map.ts': "import type { ThingBody } from './inputs/thing';\nexport type Body = ThingBody;\n",
      'server/contract/loads.ts': "import { ThingBody } from './inputs/thing';\nexport const body = ThingBody;\n",
      'renderer/form.ts': "import type { ThingBody } from '../server/contract/inputs/thing';\nexport const form = (b: ThingBody) => b.id;\n",
      'renderer/validates.ts': "import { ThingBody } from '../server/contract/inputs/thing';\nexport const check = (b: unknown) => ThingBody.parse(b);\n",
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
    it('on an input schema importing anything but zod and the contract, and not on one that imports only those', () => {
      expect(has('input-schemas-import-only-zod-and-the-contract', 'server/contract/inputs/node.ts', 'server/errors.ts'), found.text).toBe(true);
      expect(found.violations.some((v) => v.rule.name === 'input-schemas-import-only-zod-and-the-contract' && v.from === 'server/contract/inputs/node.ts' && v.to.includes('net')), found.text).toBe(true);
      expect(found.violations.filter((v) => v.from === 'server/contract/inputs/thing.ts')).toEqual([]);
    });
    it('on the contract or the dashboard loading an input schema, and not on either taking its type', () => {
      expect(has('contract-reads-input-schemas-only-as-types', 'server/contract/loads.ts', 'server/contract/inputs/thing.ts'), found.text).toBe(true);
      expect(has('renderer-reads-input-schemas-only-as-types', 'renderer/validates.ts', 'server/contract/inputs/thing.ts'), found.text).toBe(true);
      expect(found.violations.filter((v) => v.from === 'server/contract/map.ts' || v.from === 'renderer/form.ts')).toEqual([]);
    });
  });
});
