import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { charsetRefusal } from '../server/http/charset.js';
import { SERVED_EXTENSIONS, targets } from './build.mjs';

const root = path.resolve(import.meta.dirname, '..');
// Inside dist/ so the bundle's bare imports resolve from the repository's node_modules.
fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
const out = fs.mkdtempSync(path.join(root, 'dist', '.test-server-bundle-'));
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

const server = targets.find((t) => t.name === 'server')!;
/** The part of mime-types (no types of its own) the test reads. */
interface Mime {
  lookup(extensionOrPath: string): string | false;
  contentType(typeOrExtension: string): string | false;
  extensions: Record<string, string[]>;
}
const fullMime = createRequire(import.meta.url)('mime-types') as Mime;

/** Bundles `source` as the server target does (one file, no chunks); returns the file and what went in. */
async function bundleAsServer(name: string, source: string): Promise<{ outfile: string; inputs: string[] }> {
  const entry = path.join(out, `${name}-entry.ts`);
  fs.writeFileSync(entry, source);
  const outfile = path.join(out, `${name}.mjs`);
  const result = await esbuild.build({ ...server.options, entryPoints: [entry], outdir: undefined, outfile, splitting: false, absWorkingDir: root, logLevel: 'silent', metafile: true });
  return { outfile, inputs: Object.keys(result.metafile!.inputs) };
}

/** mime-types as the server bundle has it. */
async function bundledMime(): Promise<{ mime: Mime; types: number }> {
  const { outfile } = await bundleAsServer('mime', "import mime from 'mime-types';\nexport { mime };\n");
  const bundled = await import(pathToFileURL(outfile).href);
  return { mime: bundled.mime, types: Object.keys(bundled.mime.extensions).length };
}

describe('the server bundle', () => {
  it('keeps the media types of the files homefleet serves, and only those', async () => {
    const { mime, types } = await bundledMime();
    for (const ext of SERVED_EXTENSIONS) {
      expect({ ext, type: mime.lookup(ext), header: mime.contentType(ext) }).toEqual({ ext, type: fullMime.lookup(ext), header: fullMime.contentType(ext) });
    }
    // Types named in full keep their charset.
    for (const type of ['application/json', 'text/html', 'text/plain', 'text/x-shellscript', 'text/javascript', 'application/vnd.sqlite3']) {
      expect(mime.contentType(type)).toBe(fullMime.contentType(type));
    }
    expect(mime.lookup('docx')).toBe(false);
    expect(Object.keys(fullMime.extensions).length).toBeGreaterThan(900);
    expect(types).toBeLessThan(100);
  });

  it('holds better-sqlite3 and loads only its compiled addon from node_modules', async () => {
    const { outfile } = await bundleAsServer(
      'sqlite',
      [
        `import { openDatabase } from ${JSON.stringify(path.join(root, 'server/db/database.ts'))};`,
        "import { createRequire } from 'node:module';",
        "const row = openDatabase(':memory:').prepare('SELECT 41 + 1 AS answer').get();",
        'const loaded = Object.keys(createRequire(import.meta.url).cache);',
        'process.stdout.write(JSON.stringify({ row, loaded }));',
      ].join('\n'),
    );
    const { stdout } = await execa(process.execPath, [outfile], { cwd: root });
    const { row, loaded } = JSON.parse(stdout) as { row: unknown; loaded: string[] };
    expect(row).toEqual({ answer: 42 });
    // Start-up resolves no JavaScript file of better-sqlite3 (nor the `bindings` search): only the addon is loaded.
    expect(loaded.map((file) => path.relative(root, file))).toEqual([path.join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')]);
  });

  it('decodes the charsets the server lets a body have, and holds no other codec', async () => {
    const { outfile, inputs } = await bundleAsServer('charsets', "import iconv from 'iconv-lite';\nexport { iconv };\n");
    type Iconv = { encodingExists(name: string): boolean; decode(b: Buffer, e: string): string; encodings: Record<string, unknown> };
    const { iconv } = (await import(pathToFileURL(outfile).href)) as { iconv: Iconv };
    const full = createRequire(import.meta.url)('iconv-lite') as Iconv;
    full.encodingExists('utf-8');
    // Each name iconv-lite knows, and its `utf-` spelling: what charsetRefusal lets through, the bundle decodes as iconv-lite does.
    const names = [...Object.keys(full.encodings).flatMap((n) => (/^utf\d/.test(n) ? [n, `utf-${n.slice(3)}`] : [n])), 'UTF-8', 'iso-8859-1', 'ISO-8859-1', 'latin1'];
    const sample = Buffer.from([0x7b, 0x22, 0x5a, 0x6f, 0xc3, 0xab, 0xe9, 0x80, 0x22, 0x7d]);
    const letThrough = names.filter((n) => ['application/json', 'application/x-www-form-urlencoded', 'text/plain'].some((type) => charsetRefusal(`${type}; charset=${n}`) === undefined));
    expect([...new Set(letThrough.map((n) => n.toLowerCase()))].sort()).toEqual(['iso-8859-1', 'utf-8']);
    for (const name of letThrough) expect({ name, decoded: iconv.decode(sample, name) }).toEqual({ name, decoded: full.decode(sample, name) });
    expect(Object.keys(iconv.encodings!).sort()).toEqual(['_internal', '_sbcs', 'base64', 'binary', 'cesu8', 'hex', 'iso88591', 'ucs2', 'unicode11utf8', 'utf16le', 'utf8']);
    expect(inputs.filter((input) => /iconv-lite\/encodings\/(dbcs|sbcs-data|utf7|utf16|utf32)/.test(input))).toEqual([]);
  });
});
