// The Electron entry, bundled to dist/electron/main.cjs. Everything testable lives in desktop.ts;
// the type annotation makes tsc check that the real module provides what ElectronApi describes.
import type * as Electron from 'electron';
import type { ElectronApi } from './api.js';
import { startDesktop } from './desktop.js';

const electron: ElectronApi<Electron.Menu> = require('electron') as typeof Electron;

startDesktop(electron).catch((err: unknown) => {
  process.stderr.write(`homefleet: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
