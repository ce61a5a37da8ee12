import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Loads a Node built-in when it is first needed, for the ones most servers never use: an import
 * would load it, and whatever its exports reach, into every server at start. It is
 * `process.getBuiltinModule`, which Node 22 gained only in 22.3, while our engines field admits
 * 22.0; on those versions HTTPS failed to start with "process.getBuiltinModule is not a function".
 */
export const builtin = createRequire(import.meta.url) as typeof process.getBuiltinModule;

/**
 * A helper program the build ships beside the bundle that runs (server/README.md): `<name>.cjs` beside
 * the desktop app's main bundle (dist/electron: Electron runs CommonJS from inside its asar archive,
 * where ES modules have not always loaded), `<name>.js` beside the server bundle (dist/server), and,
 * from the sources (the tests), the one in dist/server. Undefined when none is built.
 */
export function builtHelper(name: string): string | undefined {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.join(here, `${name}.cjs`), path.join(here, `${name}.js`), path.join(here, '..', 'dist', 'server', `${name}.js`)];
  return candidates.find((file) => fs.existsSync(file));
}

/**
 * The body of a helper program (a process the server starts with an IPC channel): runs `work`, ends
 * at once when the server goes away (killed, say), tells a failure as `{ stage: 'failed', detail }`,
 * and lets go of the channel at the end.
 */
export function runHelper(work: () => Promise<void>): void {
  const orphaned = () => process.exit(1);
  process.on('disconnect', orphaned);
  work()
    .catch((err: unknown) => {
      process.exitCode = 1;
      process.send!({ stage: 'failed', detail: String((err as Error | undefined)?.message ?? err) });
    })
    .finally(() => {
      process.off('disconnect', orphaned);
      process.disconnect();
    });
}
