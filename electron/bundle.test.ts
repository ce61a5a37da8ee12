import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { targets } from '../build/build.mjs';
import pkg from '../package.json' with { type: 'json' };

const root = path.resolve(import.meta.dirname, '..');
// Built inside dist/ so bare requires (express, better-sqlite3) resolve from the repository's node_modules,
// and in a folder of its own so a parallel `node build/build.mjs` never overwrites it mid-test.
fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
const out = fs.mkdtempSync(path.join(root, 'dist', '.test-electron-'));
const userData = fs.mkdtempSync(path.join(out, 'user-data-'));

const electronTarget = targets.find((t) => t.name === 'electron')!;

async function buildElectron(overrides: esbuild.BuildOptions): Promise<esbuild.BuildResult> {
  return esbuild.build({ ...electronTarget.options, absWorkingDir: root, logLevel: 'silent', ...overrides });
}

beforeAll(async () => {
  // The test double, bundled to CommonJS, answers `require('electron')` through a Module._load hook.
  await esbuild.build({
    entryPoints: [path.join(root, 'electron/testing/fakeElectron.ts')],
    outfile: path.join(out, 'fake-electron.cjs'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    logLevel: 'silent',
  });
  fs.writeFileSync(
    path.join(out, 'hook.cjs'),
    `const Module = require('node:module');
const { createFakeElectron } = require('./fake-electron.cjs');
const fake = createFakeElectron({
  userData: process.env.HOMEFLEET_TEST_USER_DATA,
  onLoad: (url) => process.stdout.write('loaded ' + url + '\\n'),
  onExit: (code) => process.exit(code),
});
const load = Module._load;
Module._load = function (request, ...rest) {
  return request === 'electron' ? fake.api : load.call(this, request, ...rest);
};
process.stdin.setEncoding('utf8');
process.stdin.on('data', (line) => { if (line.includes('quit')) fake.app.quit(); });
`,
  );
});
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

describe('the Electron main bundle', () => {
  it('is declared as dist/electron/main.cjs, the package.json main', () => {
    expect(electronTarget.outfile).toBe('dist/electron/main.cjs');
    expect(electronTarget.options.outfile).toBe(pkg.main);
    expect(electronTarget.options.format).toBe('cjs');
  });

  it('builds to CommonJS without warnings, keeping electron and the packages external', async () => {
    const outfile = path.join(out, 'electron', 'main.cjs');
    const result = await buildElectron({ outfile, metafile: true });
    expect(result.warnings).toEqual([]);
    const imports = Object.values(result.metafile!.outputs).flatMap((o) => o.imports.map((i) => i.path));
    expect(imports).toEqual(expect.arrayContaining(['electron', 'better-sqlite3', 'express']));
    expect(fs.readFileSync(outfile, 'utf8')).not.toMatch(/\bimport\.meta\b/);
  });

  it('gives bundled ESM code a working import.meta.url, dirname and filename', async () => {
    const entry = path.join(out, 'meta-probe.ts');
    fs.writeFileSync(entry, 'console.log(JSON.stringify([import.meta.url, import.meta.dirname, import.meta.filename]));\n');
    const outfile = path.join(out, 'probe', 'probe.cjs');
    const result = await buildElectron({ entryPoints: [entry], outfile, sourcemap: false });
    expect(result.warnings).toEqual([]);
    const { stdout } = await execa(process.execPath, [outfile]);
    expect(JSON.parse(stdout)).toEqual([pathToFileURL(outfile).href, path.dirname(outfile), outfile]);
  });

  it('runs under Node with a stubbed electron module: serves health, opens setup, quits cleanly', async () => {
    const outfile = path.join(out, 'electron', 'main.cjs');
    await buildElectron({ outfile });
    const child = execa(process.execPath, ['-r', path.join(out, 'hook.cjs'), outfile], {
      cwd: root,
      env: { HOMEFLEET_TEST_USER_DATA: userData },
      reject: false,
      timeout: 15_000,
    });
    const loaded = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        text += chunk;
        const match = /^loaded (\S+)$/m.exec(text);
        if (match) resolve(match[1]!);
      });
      void child.then((r) => reject(new Error(`bundle exited early: ${r.stderr}`)));
    });
    const url = new URL(loaded);
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.pathname).toBe('/setup');
    expect(url.searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await (await fetch(`${url.origin}/api/health`)).json()).toEqual({ status: 'ok', version: pkg.version });

    child.stdin!.write('quit\n');
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('"msg":"stopped"');
    expect(fs.existsSync(path.join(userData, 'homefleet.db'))).toBe(true);
    expect(fs.existsSync(path.join(userData, 'homefleet.db-wal'))).toBe(false);
  });
});
