import * as esbuild from 'esbuild';
import { targets } from './build/build.mjs';
const t = targets.find((x) => x.name === 'server');
for (const n of ['a', 'b', 'c', 'd']) await t.build({ ...t.options, absWorkingDir: process.cwd(), entryPoints: { [n]: `/tmp/prof/e/${n}.ts` }, outdir: 'dist/.exp', logLevel: 'silent' });
