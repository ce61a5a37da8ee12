import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { targets } from './build.mjs';
import { buildRenderer } from './renderer.mjs';

const root = path.resolve(import.meta.dirname, '..');
fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
const out = fs.mkdtempSync(path.join(root, 'dist', '.test-renderer-'));
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

describe('the dashboard bundle', () => {
  it('holds only the dashboard, its libraries and the wire contract: no zod, no other server module', async () => {
    const renderer = targets.find((t) => t.name === 'renderer')!;
    const { metafile, summary } = await buildRenderer({ ...renderer.options, absWorkingDir: root, outdir: path.relative(root, path.join(out, 'assets')), logLevel: 'silent' });
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.filter((file) => file.includes('node_modules/zod/'))).toEqual([]);
    expect(inputs.filter((file) => file.startsWith('server/') && !file.startsWith('server/contract/'))).toEqual([]);
    // The contract is in it (the live event catalogue, the role table): the check above looks at real inputs.
    expect(inputs).toContain('server/contract/catalogue.ts');
    expect(summary).toMatch(/^first load \d+\.\d KiB of JS$/);
    // The page loads the app's entry, not one of the lazy pages (esbuild marks those entry points too).
    const script = fs.readFileSync(path.join(out, 'index.html'), 'utf8').match(/<script type="module" src="\/assets\/([^"]+)"/)![1]!;
    const [, output] = Object.entries(metafile.outputs).find(([file]) => path.basename(file) === script)!;
    expect(output.entryPoint).toBe('renderer/main.tsx');
  });
});
