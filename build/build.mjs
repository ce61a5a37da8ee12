#!/usr/bin/env node
// Builds homefleet into dist/. `--if-missing` skips any target whose output is newer than its sources,
// so `npm start` builds only what is missing or stale.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { isFresh, OUTPUTS } from './fresh.cjs';
import { buildRenderer } from './renderer.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const onlyIfStale = process.argv.includes('--if-missing');

/** Each target: what it bundles, where to, and which folders it is built from. */
export const targets = [
  {
    name: 'server',
    ...OUTPUTS.server,
    options: {
      // snapshot-worker: the helper process that copies and checks database snapshots (server/backup/snapshot-copier.ts).
      // The server itself is built apart, as CommonJS (buildServer); these share chunks between them.
      // yaml-worker: the thread that checks cloud configs' YAML (server/provisioning/yaml-thread.ts).
      // import-helper: the process that parses, checks and writes a JSON import (server/backup/import-process.ts).
      entryPoints: { recover: 'server/recover.ts', restore: 'server/backup/restore-cli.ts', 'snapshot-worker': 'server/backup/snapshot-worker.ts', 'import-helper': 'server/import-helper.ts', 'yaml-worker': 'server/provisioning/yaml-worker.ts' },
      outdir: 'dist/server',
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // Dependencies are bundled too: one file loads in a fraction of the time that resolving
      // Express's many small modules takes, which is most of start-up. better-sqlite3's JavaScript
      // as well; its compiled addon is loaded from the installed package (sqliteAddonFromPackage).
      // The helpers share their common code as chunks.
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      // Bundled CommonJS dependencies call require(); ESM output has none, so give it one.
      banner: { js: "import { createRequire as __homefleetRequire } from 'node:module'; const require = __homefleetRequire(import.meta.url);" },
      loader: { '.sql': 'text' },
      // The source is held in the heap as one string for as long as the server runs: minified it is
      // half the size (1.8 MB to 0.9 MB). The source map keeps stack traces readable.
      minify: true,
      sourcemap: true,
      plugins: [zodEnglishOnly(), acceptedCharsetsOnly(), servedMimeTypesOnly(), bodyParsersOnFirstUse(), sqliteAddonFromPackage()],
    },
    build: buildServer,
  },
  {
    // The Electron main process: CommonJS, because Electron loads `main` with require. The server
    // code it bundles is ESM; import.meta does not exist in CommonJS, so its uses are defined from
    // __filename (the bundle sits in dist/electron, beside dist/server, so paths found from it agree).
    name: 'electron',
    ...OUTPUTS.electron,
    options: {
      entryPoints: ['electron/main.ts'],
      outfile: 'dist/electron/main.cjs',
      ...electronNode(),
      external: ['electron'],
    },
  },
  {
    // The snapshot helper again, for the desktop app: Electron runs it as Node (ELECTRON_RUN_AS_NODE)
    // from inside the app's asar archive, where CommonJS loads and ES modules have not always. The
    // main bundle finds it beside itself.
    name: 'electron-snapshot-worker',
    sources: ['server', 'package.json'],
    outfile: 'dist/electron/snapshot-worker.cjs',
    options: {
      entryPoints: ['server/backup/snapshot-worker.ts'],
      outfile: 'dist/electron/snapshot-worker.cjs',
      ...electronNode(),
    },
  },
  {
    // The import helper again, for the desktop app, beside its main bundle (server/backup/import-process.ts).
    name: 'electron-import-helper',
    sources: ['server', 'package.json'],
    outfile: 'dist/electron/import-helper.cjs',
    options: {
      entryPoints: ['server/import-helper.ts'],
      outfile: 'dist/electron/import-helper.cjs',
      ...electronNode(),
    },
  },
  {
    // The YAML thread again, for the desktop app, beside its main bundle (server/provisioning/yaml-thread.ts).
    name: 'electron-yaml-worker',
    sources: ['server', 'package.json'],
    outfile: 'dist/electron/yaml-worker.cjs',
    options: {
      entryPoints: ['server/provisioning/yaml-worker.ts'],
      outfile: 'dist/electron/yaml-worker.cjs',
      ...electronNode(),
    },
  },
  {
    name: 'renderer',
    ...OUTPUTS.renderer,
    build: buildRenderer,
    options: {
      entryPoints: { app: 'renderer/main.tsx' },
      outdir: 'dist/renderer/assets',
    },
  },
];

/** How the Electron targets bundle server code: CommonJS for Electron's Node, packages from node_modules. */
function electronNode() {
  return {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    loader: { '.sql': 'text' },
    define: {
      'import.meta.url': 'importMetaUrl',
      'import.meta.dirname': '__dirname',
      'import.meta.filename': '__filename',
    },
    inject: ['build/cjs-import-meta.mjs'],
    sourcemap: true,
  };
}

/**
 * zod re-exports its 40-odd message locales (`z.locales`), which homefleet never uses: only English,
 * which zod registers by itself. Resolving the locales index to English alone keeps ~300 KiB of
 * translated messages (and their non-ASCII text) out of the server bundle.
 */
function zodEnglishOnly() {
  return {
    name: 'zod-english-only',
    setup(build) {
      build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
        if (!/[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)) return undefined;
        return { path: 'zod-locales', namespace: 'zod-english-only' };
      });
      build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, () => ({
        contents: "export { default as en } from 'zod/v4/locales/en.js';",
        resolveDir: root,
        loader: 'js',
      }));
    },
  };
}

/**
 * iconv-lite (under body-parser) decodes a request body's charset. The server refuses every charset
 * but UTF-8, and ISO-8859-1 for forms, before reading a body (server/http/charset.ts), so the bundle
 * holds those two codecs only: Node's own (internal) and ISO-8859-1's table, picked at build time.
 * The UTF-7, -16 and -32 codecs, the other single-byte ones and the Chinese, Japanese and Korean
 * ones stay out: 400 KiB of tables, and 70 KiB of code that every start would parse. A charset let
 * through that the bundle lacks would fail its request, not the process (body.ts decodeAfterReading).
 */
function acceptedCharsetsOnly() {
  return {
    name: 'accepted-charsets-only',
    setup(build) {
      build.onResolve({ filter: /^\.\.\/encodings$/ }, (args) => {
        if (!/[\\/]node_modules[\\/]iconv-lite[\\/]lib[\\/]/.test(args.importer)) return undefined;
        return { path: path.join(path.dirname(args.importer), '..', 'encodings'), namespace: 'accepted-charsets-only' };
      });
      build.onLoad({ filter: /.*/, namespace: 'accepted-charsets-only' }, (args) => ({
        contents: "const merge = require('../lib/helpers/merge-exports');\n" +
          "for (const codecs of [require('./internal'), require('./sbcs-codec')]) merge(exports, codecs);\n" +
          `exports.iso88591 = ${JSON.stringify(createRequire(path.join(args.path, 'index.js'))('./sbcs-data-generated.js').iso88591)};`,
        resolveDir: args.path,
        loader: 'js',
      }));
    },
  };
}

/**
 * Express requires body-parser when it loads, and body-parser all four of its parsers with what they
 * use (zlib, raw-body, iconv-lite): ~5 ms of every start. homefleet reads JSON bodies itself
 * (server/http/body.ts) and asks Express's parsers only for what that does not take (a form, an
 * unusual body), so in the bundle Express's json(), raw(), text() and urlencoded() load body-parser
 * when first called (esbuild's wrapper of a CommonJS package runs it on its first require).
 */
function bodyParsersOnFirstUse() {
  return {
    name: 'body-parsers-on-first-use',
    setup(build) {
      build.onResolve({ filter: /^body-parser$/ }, (args) => {
        if (args.pluginData === 'body-parsers-on-first-use' || !/[\\/]node_modules[\\/]express[\\/]lib[\\/]express\.js$/.test(args.importer)) return undefined;
        return { path: 'body-parser', namespace: 'body-parsers-on-first-use', pluginData: { resolveDir: args.resolveDir } };
      });
      build.onLoad({ filter: /.*/, namespace: 'body-parsers-on-first-use' }, async (args) => {
        const real = await build.resolve('body-parser', { kind: 'require-call', resolveDir: args.pluginData.resolveDir, pluginData: 'body-parsers-on-first-use' });
        return {
          contents: `let parsers;\nconst load = () => (parsers ??= require(${JSON.stringify(real.path)}));\n` +
            "for (const name of ['json', 'raw', 'text', 'urlencoded']) exports[name] = (...options) => load()[name](...options);\n",
          resolveDir: args.pluginData.resolveDir,
          loader: 'js',
        };
      });
    },
  };
}

/** File extensions homefleet serves or names a type by: the dashboard's assets, scripts, exports, snapshots. */
export const SERVED_EXTENSIONS = [
  'html', 'htm', 'js', 'mjs', 'css', 'map', 'json', 'webmanifest', 'txt', 'sh',
  'svg', 'png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'ico', 'woff', 'woff2', 'ttf', 'otf',
  'xml', 'csv', 'yaml', 'yml', 'md', 'pdf', 'zip', 'gz', 'wasm', 'sqlite', 'db',
];

/**
 * mime-db's 2,500 media types (160 KiB of JSON, under Express's mime-types) are parsed and indexed
 * at every start; the idle server kept 4 MB of RSS for them. homefleet serves a few kinds of file,
 * so the bundle gets the entries for the extensions above, plus every entry that names a charset
 * (so `res.type('application/json')` still adds `charset=utf-8`). An extension outside the list
 * is served as application/octet-stream, as an unknown one always was.
 */
function servedMimeTypesOnly() {
  return {
    name: 'served-mime-types-only',
    setup(build) {
      build.onResolve({ filter: /^mime-db$/ }, (args) => {
        if (!/[\\/]node_modules[\\/]mime-types[\\/]/.test(args.importer)) return undefined;
        return { path: createRequire(args.importer).resolve('mime-db/db.json'), namespace: 'served-mime-types' };
      });
      build.onLoad({ filter: /.*/, namespace: 'served-mime-types' }, (args) => {
        const db = JSON.parse(fs.readFileSync(args.path, 'utf8'));
        const kept = Object.entries(db).filter(([, entry]) => entry.charset || entry.extensions?.some((ext) => SERVED_EXTENSIONS.includes(ext)));
        return { contents: JSON.stringify(Object.fromEntries(kept)), loader: 'json' };
      });
    },
  };
}

/**
 * better-sqlite3 finds its compiled addon through `bindings`, which searches from the file that
 * calls it: bundled, that is dist/server/, where no addon is. In the server bundle, that call loads
 * the addon from the installed better-sqlite3 package instead. Bundling better-sqlite3's thirteen
 * files saves resolving and compiling them, and bindings' search of a dozen paths, at every start.
 */
function sqliteAddonFromPackage() {
  return {
    name: 'sqlite-addon-from-package',
    setup(build) {
      build.onResolve({ filter: /^bindings$/ }, (args) => {
        if (!/[\\/]node_modules[\\/]better-sqlite3[\\/]/.test(args.importer)) return undefined;
        return { path: 'bindings', namespace: 'sqlite-addon-from-package' };
      });
      build.onLoad({ filter: /.*/, namespace: 'sqlite-addon-from-package' }, () => ({
        contents: "const path = require('node:path');\n" +
          "module.exports = (name) => require(path.join(path.dirname(require.resolve('better-sqlite3/package.json')), 'build', 'Release', name));",
        loader: 'js',
      }));
    },
  };
}

/**
 * esbuild escapes non-ASCII in code, but keeps some comments as written; one such character makes V8
 * hold the whole 2 MB source as a two-byte string (4.7 MB of the idle server's heap). Comment
 * characters outside ASCII become '?', one UTF-16 unit for one, so the source map stays right.
 */
async function buildAsciiOnly(options) {
  const result = await esbuild.build({ ...options, write: false });
  for (const file of result.outputFiles) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true });
    if (/\.c?js$/.test(file.path)) fs.writeFileSync(file.path, file.text.replace(/[^\x00-\x7f]/g, '?'));
    else fs.writeFileSync(file.path, file.contents);
  }
  return result;
}

/**
 * The server target: the helper programs (recover, restore, snapshot-worker) as ES modules sharing
 * chunks, and the server as one CommonJS file, server.cjs, that main.cjs (build/server-main.cjs) runs
 * from V8's code cache; serverCodeCache makes that cache. main.js, the documented `node
 * dist/server/main.js`, is one import of main.cjs.
 */
async function buildServer(options) {
  const result = await buildAsciiOnly(options);
  const { entryPoints: _helpers, splitting: _splitting, chunkNames: _chunks, banner: _banner, ...common } = options;
  const dir = path.join(root, options.outdir);
  // A cache of the previous bundle would only be refused (see server-main.cjs); it goes first.
  fs.rmSync(path.join(dir, 'server.cjs.cache'), { force: true });
  const commonjs = {
    ...common,
    supported: { 'dynamic-import': false },
    plugins: [...common.plugins, lazyModulesApart()],
    format: 'cjs',
    outExtension: { '.js': '.cjs' },
    define: { 'import.meta.url': 'importMetaUrl', 'import.meta.dirname': '__dirname', 'import.meta.filename': '__filename' },
    inject: ['build/cjs-import-meta.mjs'],
    // Resolved at run time, where it finds the addon (sqliteAddonFromPackage).
    external: ['better-sqlite3/package.json'],
  };
  // The file is CommonJS's module wrapper already: main.js compiles it as it is, with no second copy
  // of a megabyte-long string made by wrapping it at run time.
  await buildAsciiOnly({ ...commonjs, entryPoints: { server: 'server/main.ts' }, banner: { js: '(function (exports, require, module, __filename, __dirname) {' }, footer: { js: '})' } });
  // What the server reaches only through import() is a file of its own, required when first imported:
  // the X.509 library of built-in HTTPS and the YAML parser of inventory jobs stay out of every start.
  await buildAsciiOnly({ ...commonjs, entryPoints: LAZY_MODULES });
  fs.rmSync(path.join(dir, 'main.js.map'), { force: true });
  fs.copyFileSync(path.join(root, 'build/server-main.cjs'), path.join(dir, 'main.cjs'));
  fs.writeFileSync(path.join(dir, 'main.js'), "// `node dist/server/main.js`: the server, through its CommonJS loader (build/server-main.cjs).\nimport './main.cjs';\n");
  await serverCodeCache(path.join(dir, 'main.cjs'));
  return result;
}

/** The server's modules loaded by import(), each built to dist/server/<name>.cjs. */
// As import() finds them (the "import" condition), which is how esbuild resolves the import() it replaces.
const resolvePackage = (name) => fileURLToPath(import.meta.resolve(name));
const LAZY_MODULES = {
  certificate: 'server/tls/certificate.ts',
  yaml: resolvePackage('yaml'),
  prometheus: 'server/metrics/prometheus.ts',
  'prom-client': resolvePackage('prom-client'),
  'openid-client': resolvePackage('openid-client'),
  webauthn: resolvePackage('@simplewebauthn/server'),
  otpauth: resolvePackage('otpauth'),
  qrcode: resolvePackage('qrcode'),
  nodemailer: resolvePackage('nodemailer'),
  sshpk: resolvePackage('sshpk'),
};

/** Leaves each import() of a LAZY_MODULES entry to a require of its own file at run time. */
function lazyModulesApart() {
  const files = new Map(Object.entries(LAZY_MODULES).map(([name, file]) => [path.resolve(root, file), `./${name}.cjs`]));
  return {
    name: 'lazy-modules-apart',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData === 'lazy-modules-apart') return undefined;
        const resolved = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'lazy-modules-apart' });
        const file = files.get(resolved.path);
        if (!file) throw new Error(`${args.importer} imports ${args.path} with import(): add it to LAZY_MODULES`);
        return { path: file, external: true };
      });
    },
  };
}

/**
 * Starts the built server once on a throwaway database, asks /api/health and stops it; the loader
 * (HOMEFLEET_WRITE_CODE_CACHE) then writes V8's code of everything it ran to server.cjs.cache. Its
 * environment is bare: V8 refuses a cache made under other flags (NODE_OPTIONS, say). Without the
 * cache the server starts all the same, only slower, so a failure here is a warning.
 */
async function serverCodeCache(main) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-code-cache-'));
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH, HOME: dir, PORT: '0', HOST: '127.0.0.1', DB_PATH: path.join(dir, 'homefleet.db'), LOG_LEVEL: 'info', HOMEFLEET_WRITE_CODE_CACHE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    const url = await new Promise((resolve, reject) => {
      const read = (chunk) => {
        output += chunk;
        const open = /"open":\["([^"]+)"/.exec(output);
        if (open) resolve(open[1]);
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.once('exit', () => reject(new Error('the server stopped before it listened')));
    });
    const status = await new Promise((resolve, reject) => {
      http.get(`${url}/api/health`, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      }).on('error', reject);
    });
    if (status !== 200) throw new Error(`/api/health answered ${status}`);
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    if ((await exited) !== 0 || !fs.existsSync(path.join(path.dirname(main), 'server.cjs.cache'))) throw new Error('no cache was written');
  } catch (err) {
    child.kill('SIGKILL');
    process.stderr.write(`warning: no code cache for the server (it will start slower): ${err.message}\n${output.slice(-2000)}\n`);
  } finally {
    clearTimeout(timer);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function buildTarget(target) {
  const started = Date.now();
  const options = { ...target.options, absWorkingDir: root, logLevel: 'warning' };
  // Entries that do not exist yet are left out, so a partial checkout still builds.
  if (options.entryPoints && !Array.isArray(options.entryPoints)) {
    options.entryPoints = Object.fromEntries(
      Object.entries(options.entryPoints).filter(([, file]) => fs.existsSync(path.join(root, file))),
    );
  }
  const result = await (target.build ?? esbuild.build)(options);
  process.stderr.write(`built ${target.name} in ${Date.now() - started} ms${result?.summary ? ` (${result.summary})` : ''}\n`);
}

/** Builds every target, or only the stale ones; stops esbuild's helper process afterwards. */
export async function build({ onlyIfStale: staleOnly = false } = {}) {
  let built = 0;
  for (const target of targets) {
    if (staleOnly && isFresh(root, target)) continue;
    await buildTarget(target);
    built++;
  }
  if (built) await esbuild.stop();
}

// Run only as a script, so tests can import `targets` without building.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await build({ onlyIfStale });
}
