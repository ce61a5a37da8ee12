/**
 * The parts of Electron's main-process API the desktop shell uses. The real `electron` module
 * satisfies these types (electron/main.ts passes it in and tsc checks that), and the tests pass a
 * hand-written double, so the wiring runs for real without the Electron binary.
 */

export interface PreventableEvent {
  preventDefault(): void;
}

export interface NavigationEvent extends PreventableEvent {
  url: string;
}

export interface WindowOpenDetails {
  url: string;
}

export type PermissionRequestHandler = (webContents: unknown, permission: string, callback: (granted: boolean) => void) => void;
export type PermissionCheckHandler = (webContents: unknown, permission: string) => boolean;

export interface SessionApi {
  setPermissionRequestHandler(handler: PermissionRequestHandler | null): void;
  setPermissionCheckHandler(handler: PermissionCheckHandler | null): void;
}

export interface WebContentsApi {
  session: SessionApi;
  on(event: 'will-navigate', listener: (event: NavigationEvent) => void): unknown;
  on(event: 'will-redirect', listener: (event: NavigationEvent) => void): unknown;
  on(event: 'will-attach-webview', listener: (event: PreventableEvent) => void): unknown;
  setWindowOpenHandler(handler: (details: WindowOpenDetails) => { action: 'deny' }): void;
}

export interface WebPreferencesOptions {
  contextIsolation: boolean;
  nodeIntegration: boolean;
  nodeIntegrationInWorker: boolean;
  sandbox: boolean;
  webSecurity: boolean;
  webviewTag: boolean;
  allowRunningInsecureContent: boolean;
  spellcheck: boolean;
}

export interface WindowOptions {
  width: number;
  height: number;
  minWidth: number;
  minHeight: number;
  title: string;
  show: boolean;
  autoHideMenuBar: boolean;
  webPreferences: WebPreferencesOptions;
}

export interface WindowApi {
  webContents: WebContentsApi;
  loadURL(url: string): Promise<void>;
  show(): void;
  focus(): void;
  restore(): void;
  isMinimized(): boolean;
  isDestroyed(): boolean;
  once(event: 'ready-to-show', listener: () => void): unknown;
  on(event: 'closed', listener: () => void): unknown;
}

export interface WindowConstructor {
  new (options: WindowOptions): WindowApi;
  getAllWindows(): WindowApi[];
}

export interface AppApi {
  requestSingleInstanceLock(): boolean;
  whenReady(): Promise<void>;
  getPath(name: 'userData'): string;
  quit(): void;
  exit(code?: number): void;
  on(event: 'second-instance', listener: () => void): unknown;
  on(event: 'before-quit', listener: (event: PreventableEvent) => void): unknown;
  on(event: 'window-all-closed', listener: () => void): unknown;
  on(event: 'activate', listener: () => void): unknown;
}

export interface MenuItemOptions {
  label?: string;
  role?: 'appMenu' | 'fileMenu' | 'editMenu' | 'viewMenu' | 'windowMenu' | 'quit' | 'reload' | 'toggleDevTools';
  type?: 'separator';
  click?: () => void;
  submenu?: MenuItemOptions[];
}

export interface MenuStatic<M> {
  buildFromTemplate(template: MenuItemOptions[]): M;
  setApplicationMenu(menu: M | null): void;
}

export interface ShellApi {
  openExternal(url: string): Promise<void>;
  openPath(path: string): Promise<string>;
}

export interface DialogApi {
  showErrorBox(title: string, content: string): void;
}

export interface ElectronApi<M = unknown> {
  app: AppApi;
  BrowserWindow: WindowConstructor;
  Menu: MenuStatic<M>;
  shell: ShellApi;
  dialog: DialogApi;
}
