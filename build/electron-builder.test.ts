import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import pkg from '../package.json' with { type: 'json' };

const root = path.resolve(import.meta.dirname, '..');
const configFile = path.join(root, 'build/electron-builder.yml');
const text = fs.readFileSync(configFile, 'utf8');
const config = YAML.parse(text);

// electron-builder's own loader and schema validation (app-builder-lib), which run offline.
const require = createRequire(import.meta.url);
const builderConfig = require('app-builder-lib/out/util/config/config.js') as {
  validateConfiguration(config: unknown, debug: { isEnabled: boolean; add(): void }): Promise<void>;
  getConfig(projectDir: string, configPath: string, fromOptions: null): Promise<Record<string, unknown>>;
};
const quietDebug = { isEnabled: false, add() {} };

function targetsOf(platform: { target: (string | { target: string })[] }): string[] {
  return platform.target.map((t) => (typeof t === 'string' ? t : t.target));
}

describe('the electron-builder configuration', () => {
  it('passes electron-builder\'s own schema validation, which rejects an unknown option', async () => {
    const loaded = await builderConfig.getConfig(root, 'build/electron-builder.yml', null);
    await expect(builderConfig.validateConfiguration(loaded, quietDebug)).resolves.toBeUndefined();
    await expect(builderConfig.validateConfiguration({ ...config, linux: { ...config.linux, targets: ['deb'] } }, quietDebug)).rejects.toThrow(
      /Invalid configuration object/,
    );
  });

  it('builds AppImage and deb for Linux, NSIS for Windows and dmg for macOS into dist/release', () => {
    expect(targetsOf(config.linux)).toEqual(['AppImage', 'deb']);
    expect(targetsOf(config.win)).toEqual(['nsis']);
    expect(targetsOf(config.mac)).toEqual(['dmg']);
    expect(config.directories.output).toBe('dist/release');
    expect(config.productName).toBe('homefleet');
    expect(config.appId).toMatch(/^[a-z0-9]+(\.[a-z0-9-]+)+$/);
  });

  it('packs the built server, Electron main and dashboard with package.json, including the main entry', () => {
    expect(config.files).toEqual(expect.arrayContaining(['dist/server/**', 'dist/electron/**', 'dist/renderer/**', 'package.json']));
    // Nothing from the sources or the tests goes in: besides dist/, only what the server serves to
    // fleet machines (build/shipped-agents.test.ts).
    const beside = config.files.filter((f: string) => !f.startsWith('!') && !f.startsWith('dist/') && f !== 'package.json');
    expect(beside).toEqual(['reporter/*.sh', 'reporter/lib/**', 'build/agents/**']);
    const included = config.files.filter((f: string) => f.endsWith('/**')).map((f: string) => f.slice(0, -2));
    expect(included.some((dir: string) => pkg.main.startsWith(dir))).toBe(true);
  });

  it('unpacks better-sqlite3 from the archive and rebuilds it for Electron', () => {
    expect(config.asarUnpack).toContain('**/node_modules/better-sqlite3/**');
    expect(config.npmRebuild).toBe(true);
    expect(config.asar).not.toBe(false);
    expect(pkg.dependencies).toHaveProperty('better-sqlite3');
  });

  it('takes the version from package.json only and never publishes by itself', () => {
    expect(config).not.toHaveProperty('extraMetadata');
    expect(config).not.toHaveProperty('buildVersion');
    expect(text).not.toMatch(/^\s*version\s*:/m);
    expect(text).not.toContain(pkg.version);
    expect(config.publish).toBeNull();
  });
});
