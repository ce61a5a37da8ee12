// The dashboard bundle: content-hashed JS and CSS under dist/renderer/assets, and an index.html naming them.
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';

/** Builds the renderer with esbuild, then writes index.html referencing the hashed files. */
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
    entryNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const js = outputs.find((file) => file.endsWith('.js'));
  const css = outputs.find((file) => file.endsWith('.css'));
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
  const index = path.join(outdir, '..', 'index.html');
  const temporary = `${index}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, html);
  fs.renameSync(temporary, index);
}
