import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createApp, type HomefleetApp } from '../server/app.js';
import { closeServer } from '../server/http/server.js';
import { createListener } from '../server/tls/listen.js';
import { VERSION } from '../server/version.js';
import type { ElectronApi, MenuItemOptions, WindowApi } from './api.js';
import { accountExistsAt, newSetupToken, startUrl } from './firstStart.js';
import { createMainWindow } from './window.js';

export interface DesktopOptions {
  /** Defaults to 'info'; the tests pass 'silent'. */
  logLevel?: string;
  /** Defaults to process.platform; decides the macOS conventions (app menu, staying open without windows). */
  platform?: NodeJS.Platform;
}

export interface Desktop {
  /** http://127.0.0.1:<port>, the only origin the window may show. */
  origin: string;
  /** The first URL the window loaded (the setup page with its token on first start). */
  startUrl: string;
  userData: string;
  dbPath: string;
  homefleet: HomefleetApp;
  server: Server;
  window(): WindowApi | null;
  /** Closes the HTTP server, then the app (scheduler and database); runs once, later calls share it. */
  shutdown(): Promise<void>;
}

const TITLE = 'homefleet';

/**
 * The desktop shell: one instance, the server in-process on a loopback port with the database in
 * the user-data folder, one window locked to that server. Returns null when another instance owns
 * the lock or start-up failed (the app is then quitting).
 */
export async function startDesktop(electron: ElectronApi, options: DesktopOptions = {}): Promise<Desktop | null> {
  const { app, BrowserWindow, Menu, shell, dialog } = electron;
  const platform = options.platform ?? process.platform;

  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return null;
  }
  let window: WindowApi | null = null;
  let showWindow = (): void => {};
  app.on('second-instance', () => showWindow());

  await app.whenReady();
  const userData = app.getPath('userData');
  const dbPath = path.join(userData, 'homefleet.db');

  let homefleet: HomefleetApp;
  let server: Server;
  let setupToken: string | undefined;
  try {
    // "On first start (no account yet) it generates a one-time setup token itself."
    setupToken = accountExistsAt(dbPath) ? undefined : newSetupToken();
    homefleet = createApp({
      config: { host: '127.0.0.1', port: 0, dbPath, authAllowHttp: true, logLevel: options.logLevel ?? 'info', setupToken },
    });
    server = await listenOnLoopback(homefleet);
  } catch (err) {
    dialog.showErrorBox('homefleet could not start', err instanceof Error ? err.message : String(err));
    app.exit(1);
    return null;
  }
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const firstUrl = startUrl(origin, setupToken);
  const logger = homefleet.context.logger;
  logger.info({ version: VERSION, db: dbPath }, `homefleet desktop listening on ${origin}`);

  const openExternal = (url: string) => shell.openExternal(url);
  let windowOpened = false;
  showWindow = () => {
    if (window && !window.isDestroyed()) {
      if (window.isMinimized()) window.restore();
      window.focus();
      return;
    }
    const created = createMainWindow(BrowserWindow, { origin, title: TITLE, openExternal });
    created.on('closed', () => {
      if (window === created) window = null;
    });
    window = created;
    // After the first window the setup token may be spent: later windows start at the dashboard.
    const url = setupToken !== undefined && !windowOpened ? firstUrl : `${origin}/`;
    windowOpened = true;
    created.loadURL(url).catch((err: unknown) => logger.error({ err }, 'window failed to load'));
  };

  Menu.setApplicationMenu(Menu.buildFromTemplate(menuTemplate(platform, {
    openDashboard: () => void shell.openExternal(`${origin}/`).catch(() => {}),
    showDataFolder: () => void shell.openPath(userData),
  })));

  let stopping: Promise<void> | undefined;
  let stopped = false;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      // The app ends its event streams and agents' polls first, then waits on the server (3 s at most).
      await homefleet.close(() => closeServer(server, 3_000));
      logger.info('stopped');
    })().finally(() => {
      stopped = true;
    });
    return stopping;
  };
  // Electron quits as soon as before-quit returns; hold it until the server and database are closed.
  app.on('before-quit', (event) => {
    if (stopped) return;
    event.preventDefault();
    shutdown().then(
      () => app.quit(),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        app.exit(1);
      },
    );
  });
  app.on('window-all-closed', () => {
    if (platform !== 'darwin') app.quit();
  });
  app.on('activate', () => showWindow());

  showWindow();
  return {
    origin,
    startUrl: firstUrl,
    userData,
    dbPath,
    homefleet,
    server,
    window: () => window,
    shutdown,
  };
}

export function menuTemplate(
  platform: NodeJS.Platform,
  actions: { openDashboard: () => void; showDataFolder: () => void },
): MenuItemOptions[] {
  return [
    ...(platform === 'darwin' ? [{ role: 'appMenu' } as const] : []),
    {
      label: 'File',
      submenu: [
        { label: 'Open Dashboard in Browser', click: actions.openDashboard },
        { label: 'Show Data Folder', click: actions.showDataFolder },
        { type: 'separator' },
        { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    { role: 'viewMenu' },
    { role: 'windowMenu' },
  ];
}

async function listenOnLoopback(homefleet: HomefleetApp): Promise<Server> {
  // Plain HTTP on loopback, served as the headless server serves it.
  const server = createListener(homefleet.app, undefined).listen(0, '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch (err) {
    await homefleet.close();
    throw err;
  }
  return server;
}

