// The dashboard bundle: content-hashed JS and CSS under dist/renderer/assets, and an index.html naming them.
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';

/**
 * Builds the renderer with esbuild, then writes index.html referencing the hashed files. Returns
 * esbuild's metafile (what went in) and a summary of the first load's size, which the build prints.
 */
export async function buildRenderer(options) {
  const root = options.absWorkingDir;
  const outdir = path.join(root, options.outdir);
  const result = await esbuild.build({
    ...options,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    // Pages loaded with import() (all but the first pages, and the charts) become their own chunks.
    splitting: true,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    metafile: true,
    legalComments: 'none',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  // The page's script is the output of the configured entry: every page loaded with import() is an
  // entry point to esbuild too.
  const entryPoints = Object.values(options.entryPoints);
  const entry = Object.entries(result.metafile.outputs).find(([file, output]) => entryPoints.includes(output.entryPoint) && file.endsWith('.js'));
  const js = entry && path.basename(entry[0]);
  const css = entry?.[1].cssBundle ? path.basename(entry[1].cssBundle) : outputs.find((file) => file.endsWith('.css'));
  if (!js || !css) throw new Error(`renderer build produced ${outputs.join(', ')}`);
  // Stale hashed files go only after the new ones exist, so a server reading the folder never sees a gap.
  for (const file of fs.readdirSync(outdir)) if (!outputs.includes(file)) fs.rmSync(path.join(outdir, file));
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>homefleet</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/${css}">
<script type="module" src="/assets/${js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The homefleet dashboard needs JavaScript.</noscript>
</body>
</html>
`;
  // Which files the first page load fetches (the entry and its static imports) and which each lazy page adds:
  // the dashboard benchmark prints their sizes against the budget.
  const out = result.metafile.outputs;
  const staticClosure = (file, seen = new Set()) => {
    if (seen.has(file)) return seen;
    seen.add(file);
    for (const imp of out[file]?.imports ?? []) if (imp.kind === 'import-statement' && imp.path.endsWith('.js')) staticClosure(imp.path, seen);
    return seen;
  };
  const mainFiles = staticClosure(entry[0]);
  const lazy = {};
  for (const imp of out[entry[0]].imports) {
    if (imp.kind !== 'dynamic-import') continue;
    const name = path.basename(Object.keys(out[imp.path]?.inputs ?? {}).find((input) => input.startsWith('renderer/pages/')) ?? imp.path).replace(/\.[tj]sx?$/, '');
    lazy[name] = [...staticClosure(imp.path)].filter((file) => !mainFiles.has(file)).map((file) => path.basename(file));
  }
  const manifest = { main: [...mainFiles].map((file) => path.basename(file)), css, lazy };
  fs.writeFileSync(path.join(outdir, '..', 'bundle.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  const index = path.join(outdir, '..', 'index.html');
  const temporary = `${index}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, html);
  fs.renameSync(temporary, index);
  const firstLoad = manifest.main.reduce((sum, file) => sum + fs.statSync(path.join(outdir, file)).size, 0);
  return { metafile: result.metafile, summary: `first load ${(firstLoad / 1024).toFixed(1)} KiB of JS` };
}
