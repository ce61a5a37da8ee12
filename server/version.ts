import pkg from '../package.json' with { type: 'json' };

/** The package version is the only version: health, footer, desktop app and image read it. */
export const VERSION: string = pkg.version;
