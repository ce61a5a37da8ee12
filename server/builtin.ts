import { createRequire } from 'node:module';

/**
 * Loads a Node built-in when it is first needed, for the ones most servers never use: an import
 * would load it, and whatever its exports reach, into every server at start. It is
 * `process.getBuiltinModule`, which Node 22 gained only in 22.3, while our engines field admits
 * 22.0; on those versions HTTPS failed to start with "process.getBuiltinModule is not a function".
 */
export const builtin = createRequire(import.meta.url) as typeof process.getBuiltinModule;
