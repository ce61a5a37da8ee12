/** Types for renderer.mjs, so tests can build the dashboard as the build does. */
import type { BuildOptions, Metafile } from 'esbuild';
export declare function buildRenderer(options: BuildOptions & { absWorkingDir: string; outdir: string }): Promise<{ metafile: Metafile; summary: string }>;
