/**
 * A hand-written test double of the Electron main-process API (see api.ts): it records what the
 * shell asks of Electron and lets a test play Electron's part (navigate, open a window, ask for a
 * permission, launch a second instance, quit). Also bundled into a Node preload hook by
 * bundle.test.ts, to run dist/electron/main.cjs without the Electron binary.
 */
import type {
  AppApi,
  DialogApi,
  ElectronApi,
  MenuItemOptions,
  MenuStatic,
  NavigationEvent,
  PermissionCheckHandler,
  PermissionRequestHandler,
  SessionApi,
  ShellApi,
  WebContentsApi,
  WindowApi,
  WindowOpenDetails,
  WindowOptions,
} from '../api.js';

type Listener = (...args: never[]) => unknown;

class Emitter {
  private readonly listeners = new Map<string, Listener[]>();
  on(event: string, listener: Listener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }
  once(event: string, listener: Listener): this {
    const wrapped = ((...args: never[]) => {
      this.off(event, wrapped);
      return listener(...args);
    }) as Listener;
    return this.on(event, wrapped);
  }
  off(event: string, listener: Listener): this {
    this.listeners.set(event, (this.listeners.get(event) ?? []).filter((l) => l !== listener));
    return this;
  }
  emit(event: string, ...args: unknown[]): void {
    for (const listener of this.listeners.get(event) ?? []) (listener as (...a: unknown[]) => unknown)(...args);
  }
  listenerCount(event: string): number {
    return this.listeners.get(event)?.length ?? 0;
  }
}

export interface FakeEvent {
  defaultPrevented: boolean;
  preventDefault(): void;
}

function fakeEvent<T extends object>(extra: T): T & FakeEvent {
  const event = {
    ...extra,
    defaultPrevented: false,
    preventDefault() {
      event.defaultPrevented = true;
    },
  };
  return event;
}

export class FakeSession implements SessionApi {
  requestHandler: PermissionRequestHandler | null = null;
  checkHandler: PermissionCheckHandler | null = null;
  setPermissionRequestHandler(handler: PermissionRequestHandler | null): void {
    this.requestHandler = handler;
  }
  setPermissionCheckHandler(handler: PermissionCheckHandler | null): void {
    this.checkHandler = handler;
  }
  /** What a page asking for `permission` would get; Electron grants everything when no handler is set. */
  async request(permission: string): Promise<boolean> {
    const handler = this.requestHandler;
    if (!handler) return true;
    return new Promise((resolve) => handler({}, permission, resolve));
  }
  check(permission: string): boolean {
    return this.checkHandler ? this.checkHandler({}, permission) : true;
  }
}

export class FakeWebContents extends Emitter implements WebContentsApi {
  readonly session = new FakeSession();
  windowOpenHandler: ((details: WindowOpenDetails) => { action: 'deny' }) | null = null;
  setWindowOpenHandler(handler: (details: WindowOpenDetails) => { action: 'deny' }): void {
    this.windowOpenHandler = handler;
  }
  /** Plays a link click or location change; true when the navigation may go ahead. */
  navigate(url: string): boolean {
    const event: NavigationEvent & FakeEvent = fakeEvent({ url });
    this.emit('will-navigate', event);
    return !event.defaultPrevented;
  }
  redirect(url: string): boolean {
    const event = fakeEvent({ url });
    this.emit('will-redirect', event);
    return !event.defaultPrevented;
  }
  /** Plays window.open / target=_blank; Electron opens a window unless the handler denies. */
  openWindow(url: string): 'allow' | 'deny' {
    return this.windowOpenHandler ? this.windowOpenHandler({ url }).action : 'allow';
  }
  attachWebview(): boolean {
    const event = fakeEvent({});
    this.emit('will-attach-webview', event);
    return !event.defaultPrevented;
  }
}

export interface FakeElectronOptions {
  userData: string;
  /** False plays a second launch: another instance holds the lock. */
  lockAvailable?: boolean;
  onLoad?: (url: string) => void;
  onExit?: (code: number) => void;
}

export interface FakeMenu {
  template: MenuItemOptions[];
}

export function createFakeElectron(options: FakeElectronOptions) {
  const windows: FakeWindow[] = [];
  const shellCalls: { openExternal: string[]; openPath: string[] } = { openExternal: [], openPath: [] };
  const errorBoxes: { title: string; content: string }[] = [];
  let applicationMenu: FakeMenu | null = null;

  class FakeApp extends Emitter implements AppApi {
    quitCalls = 0;
    exitCode: number | null = null;
    requestSingleInstanceLock(): boolean {
      return options.lockAvailable ?? true;
    }
    whenReady(): Promise<void> {
      return Promise.resolve();
    }
    getPath(name: 'userData'): string {
      if (name !== 'userData') throw new Error(`fake app has no path ${String(name)}`);
      return options.userData;
    }
    /** Electron's order: before-quit (may be prevented), will-quit (may be prevented), quit, exit. */
    quit(): void {
      this.quitCalls += 1;
      if (this.exitCode !== null) return;
      const before = fakeEvent({});
      this.emit('before-quit', before);
      if (before.defaultPrevented) return;
      const will = fakeEvent({});
      this.emit('will-quit', will);
      if (will.defaultPrevented) return;
      this.emit('quit');
      this.exit(0);
    }
    exit(code = 0): void {
      if (this.exitCode !== null) return;
      this.exitCode = code;
      options.onExit?.(code);
    }
  }
  const app = new FakeApp();

  class FakeWindow extends Emitter implements WindowApi {
    readonly webContents = new FakeWebContents();
    readonly loaded: string[] = [];
    visible = false;
    minimized = false;
    destroyed = false;
    focusCount = 0;
    constructor(readonly options: WindowOptions) {
      super();
      windows.push(this);
    }
    static getAllWindows(): WindowApi[] {
      return windows.filter((w) => !w.destroyed);
    }
    loadURL(url: string): Promise<void> {
      this.loaded.push(url);
      options.onLoad?.(url);
      this.emit('ready-to-show');
      return Promise.resolve();
    }
    show(): void {
      this.visible = true;
    }
    focus(): void {
      this.focusCount += 1;
    }
    restore(): void {
      this.minimized = false;
    }
    minimize(): void {
      this.minimized = true;
    }
    isMinimized(): boolean {
      return this.minimized;
    }
    isDestroyed(): boolean {
      return this.destroyed;
    }
    /** The user closes the window. */
    close(): void {
      this.destroyed = true;
      this.emit('closed');
      if (FakeWindow.getAllWindows().length === 0) app.emit('window-all-closed');
    }
  }

  const Menu: MenuStatic<FakeMenu> = {
    buildFromTemplate: (template) => ({ template }),
    setApplicationMenu: (menu) => {
      applicationMenu = menu;
    },
  };
  const shell: ShellApi = {
    openExternal: async (url) => {
      shellCalls.openExternal.push(url);
    },
    openPath: async (path) => {
      shellCalls.openPath.push(path);
      return '';
    },
  };
  const dialog: DialogApi = {
    showErrorBox: (title, content) => {
      errorBoxes.push({ title, content });
    },
  };
  const api: ElectronApi<FakeMenu> = { app, BrowserWindow: FakeWindow, Menu, shell, dialog };

  return {
    api,
    app,
    windows,
    shellCalls,
    errorBoxes,
    menu: () => applicationMenu,
    /** The menu item with this label, searched through submenus. */
    menuItem(label: string): MenuItemOptions | undefined {
      const search = (items: MenuItemOptions[]): MenuItemOptions | undefined => {
        for (const item of items) {
          if (item.label === label) return item;
          const found = item.submenu && search(item.submenu);
          if (found) return found;
        }
        return undefined;
      };
      return applicationMenu ? search(applicationMenu.template) : undefined;
    },
  };
}

export type FakeElectron = ReturnType<typeof createFakeElectron>;
export type FakeWindow = FakeElectron['windows'][number];
