/**
 * The host agent and its installer are served as single files (they are piped into bash), yet they
 * share one copy of their helpers, in reporter/lib/. A script includes a helper with the line
 *
 *     source "${BASH_SOURCE[0]%/*}/lib/common.sh" # homefleet:include
 *
 * (which also lets it run from a checkout); serving replaces that line with the helper's text.
 */
const INCLUDE = String.raw`^(?:source|\.) "\$\{BASH_SOURCE\[0\]%/\*\}/(lib/[a-z0-9-]+\.sh)" # homefleet:include$`;

/** The helper files (relative to the script's folder) that `script` includes, in order. */
export function includedFiles(script: string): string[] {
  return [...script.matchAll(new RegExp(INCLUDE, 'gm'))].map((m) => m[1]!);
}

/** `script` with each include line replaced by the text `read` gives for its file (which may throw). */
export function assembleScript(script: string, read: (file: string) => string): string {
  return script.replace(new RegExp(INCLUDE, 'gm'), (_line, file: string) => read(file).replace(/\n$/, ''));
}
