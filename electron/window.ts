import type { ShellApi, WindowApi, WindowConstructor, WindowOptions } from './api.js';
import { isInternalUrl } from './url.js';

export interface MainWindowOptions {
  /** The local server's origin, e.g. http://127.0.0.1:41234: the only place the window may show. */
  origin: string;
  title: string;
  openExternal: ShellApi['openExternal'];
}

/**
 * The renderer is a plain web page from our own server: no Node, no preload (the dashboard talks
 * to the server over HTTP and needs nothing from the main process), sandboxed and isolated.
 */
export function windowOptions(title: string): WindowOptions {
  return {
    width: 1280,
    height: 840,
    minWidth: 720,
    minHeight: 480,
    title,
    show: false,
    autoHideMenuBar: false,
    webPreferences: {
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      sandbox: true,
      webSecurity: true,
      webviewTag: false,
      allowRunningInsecureContent: false,
      spellcheck: false,
    },
  };
}

function isWebLink(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** Sends an external http(s) link to the system browser; anything else (file:, javascript:, custom schemes) is dropped. */
function openInBrowser(url: string, openExternal: ShellApi['openExternal']): void {
  if (!isWebLink(url)) return;
  openExternal(url).catch(() => {
    // No browser registered: nothing useful to do from a click.
  });
}

/** Creates the dashboard window and locks it to the local server's origin. */
export function createMainWindow(BrowserWindow: WindowConstructor, options: MainWindowOptions): WindowApi {
  const win = new BrowserWindow(windowOptions(options.title));
  const { webContents } = win;

  webContents.on('will-navigate', (event) => {
    if (isInternalUrl(event.url, options.origin)) return;
    event.preventDefault();
    openInBrowser(event.url, options.openExternal);
  });
  // A redirect is the server's doing, not the user's: an external target is just stopped.
  webContents.on('will-redirect', (event) => {
    if (!isInternalUrl(event.url, options.origin)) event.preventDefault();
  });
  webContents.on('will-attach-webview', (event) => event.preventDefault());
  webContents.setWindowOpenHandler(({ url }) => {
    openInBrowser(url, options.openExternal);
    return { action: 'deny' };
  });

  // The dashboard needs no camera, notifications, clipboard reads or anything else a site can ask for.
  webContents.session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  webContents.session.setPermissionCheckHandler(() => false);

  win.once('ready-to-show', () => win.show());
  return win;
}
