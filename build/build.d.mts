/** Types for build.mjs, so tests can read the esbuild targets. */
export interface BuildTarget {
  name: string;
  sources: string[];
  outfile: string;
  options: any;
}
export declare const targets: BuildTarget[];
export declare function build(options?: { onlyIfStale?: boolean }): Promise<void>;
/** File extensions whose media types the server bundle keeps from mime-db. */
export declare const SERVED_EXTENSIONS: string[];
