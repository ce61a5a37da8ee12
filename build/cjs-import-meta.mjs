// Injected into the CommonJS Electron bundle (see build.mjs): what `import.meta.url` means there.
export const importMetaUrl = require('node:url').pathToFileURL(__filename).href;
