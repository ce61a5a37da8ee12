import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { openRetained } from '../server/db/database.js';
import { startDesktop, type Desktop, type DesktopOptions } from './desktop.js';
import { addAccount } from './testing/accounts.js';
import { createFakeElectron, type FakeElectron } from './testing/fakeElectron.js';

interface Launched {
  fake: FakeElectron;
  desktop: Desktop;
  exited: Promise<number>;
}

const dirs: string[] = [];
const running: Desktop[] = [];

function userDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-desktop-'));
  dirs.push(dir);
  return dir;
}

async function launch(userData = userDataDir(), options: DesktopOptions = {}, lockAvailable = true) {
  let onExit!: (code: number) => void;
  const exited = new Promise<number>((resolve) => (onExit = resolve));
  const fake = createFakeElectron({ userData, lockAvailable, onExit });
  const desktop = await startDesktop(fake.api, { logLevel: 'silent', platform: 'linux', ...options });
  if (desktop) running.push(desktop);
  return { fake, desktop, exited };
}

async function launched(userData?: string, options: DesktopOptions = {}): Promise<Launched> {
  const { fake, desktop, exited } = await launch(userData, options);
  if (!desktop) throw new Error('the desktop did not start');
  return { fake, desktop, exited };
}

afterEach(async () => {
  for (const desktop of running.splice(0)) await desktop.shutdown();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('desktop start-up', () => {
  it('starts the real server on 127.0.0.1 and loads the setup page with a fresh token on first start', async () => {
    const userData = userDataDir();
    const { fake, desktop } = await launched(userData);

    expect(fake.windows).toHaveLength(1);
    const [window] = fake.windows;
    expect(window!.loaded).toHaveLength(1);
    const loaded = new URL(window!.loaded[0]!);
    expect(loaded.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(loaded.pathname).toBe('/setup');
    const token = loaded.searchParams.get('token')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(window!.visible).toBe(true);

    const health = await fetch(`${loaded.origin}/api/health`);
    expect(await health.json()).toEqual({ status: 'ok', version: pkg.version });

    const config = desktop.homefleet.context.config;
    expect(config).toMatchObject({ host: '127.0.0.1', authAllowHttp: true, setupToken: token, dbPath: path.join(userData, 'homefleet.db') });
    expect(desktop.server.address()).toMatchObject({ address: '127.0.0.1' });
    expect(fs.existsSync(path.join(userData, 'homefleet.db'))).toBe(true);
  });

  it('generates a different setup token on each first start until an account exists', async () => {
    const userData = userDataDir();
    const first = await launched(userData);
    await first.desktop.shutdown();
    const second = await launched(userData);
    expect(second.desktop.homefleet.context.config.setupToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second.desktop.homefleet.context.config.setupToken).not.toBe(first.desktop.homefleet.context.config.setupToken);
  });

  it('opens the dashboard without a setup token once an account exists', async () => {
    const userData = userDataDir();
    addAccount(path.join(userData, 'homefleet.db'));
    const { fake, desktop } = await launched(userData);
    expect(fake.windows[0]!.loaded).toEqual([`${desktop.origin}/`]);
    expect(desktop.homefleet.context.config.setupToken).toBeUndefined();
    expect((await fetch(`${desktop.origin}/api/health`)).status).toBe(200);
  });

  it('the setup link it opens creates the first administrator; the next start opens the dashboard', async () => {
    const userData = userDataDir();
    const first = await launched(userData);
    const setupUrl = new URL(first.fake.windows[0]!.loaded[0]!);
    const page = await fetch(setupUrl);
    expect(page.status).toBe(200);
    const created = await fetch(`${setupUrl.origin}/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: setupUrl.origin },
      body: JSON.stringify({ setup_token: setupUrl.searchParams.get('token'), username: 'owner', display_name: 'Owner', password: 'desktop owner password' }),
    });
    expect(created.status).toBe(201);
    const login = await fetch(`${setupUrl.origin}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: setupUrl.origin },
      body: JSON.stringify({ username: 'owner', password: 'desktop owner password' }),
    });
    expect(login.status).toBe(200);
    expect(login.headers.get('set-cookie')).toMatch(/^homefleet_session_dev=/);
    await first.desktop.shutdown();

    const second = await launched(userData);
    expect(second.fake.windows[0]!.loaded).toEqual([`${second.desktop.origin}/`]);
    expect(second.desktop.homefleet.context.config.setupToken).toBeUndefined();
    expect((await fetch(`${second.desktop.origin}/setup`)).status).toBe(404);
  });

  it('keeps database snapshots beside its database, in the user-data folder', async () => {
    const userData = userDataDir();
    const { desktop } = await launched(userData);
    expect(desktop.homefleet.snapshots.enabled).toBe(true);
    const taken = await desktop.homefleet.snapshots.take('manual');
    expect(fs.readdirSync(path.join(userData, 'snapshots'))).toEqual([taken.name]);
  });

  it('shows an error box and exits with 1 when the database cannot be opened', async () => {
    const userData = userDataDir();
    const db = openRetained(path.join(userData, 'homefleet.db'));
    db.exec('PRAGMA user_version = 9999');
    db.close();
    const { fake, desktop, exited } = await launch(userData);
    expect(desktop).toBeNull();
    expect(await exited).toBe(1);
    expect(fake.errorBoxes).toEqual([{ title: 'homefleet could not start', content: expect.stringMatching(/newer than this release supports/) }]);
    expect(fake.windows).toHaveLength(0);
  });
});

describe('desktop window security', () => {
  it('isolates and sandboxes the renderer without Node and without a preload', async () => {
    const { fake } = await launched();
    const { webPreferences } = fake.windows[0]!.options;
    expect(webPreferences).toEqual({
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      sandbox: true,
      webSecurity: true,
      webviewTag: false,
      allowRunningInsecureContent: false,
      spellcheck: false,
    });
    expect(webPreferences).not.toHaveProperty('preload');
  });

  it('lets the window navigate only within the server origin and sends web links to the system browser', async () => {
    const { fake, desktop } = await launched();
    const contents = fake.windows[0]!.webContents;
    const port = new URL(desktop.origin).port;

    expect(contents.navigate(`${desktop.origin}/instances?search=web`)).toBe(true);
    expect(contents.navigate(`${desktop.origin}/login`)).toBe(true);
    expect(fake.shellCalls.openExternal).toEqual([]);

    expect(contents.navigate('https://example.org/docs')).toBe(false);
    expect(contents.navigate(`http://localhost.evil.example:${port}/`)).toBe(false);
    expect(contents.navigate(`http://127.0.0.1:${Number(port) + 1}/`)).toBe(false);
    expect(fake.shellCalls.openExternal).toEqual(['https://example.org/docs', `http://localhost.evil.example:${port}/`, `http://127.0.0.1:${Number(port) + 1}/`]);

    // Not web links: blocked and never handed to the operating system.
    expect(contents.navigate('file:///etc/passwd')).toBe(false);
    expect(contents.navigate('javascript:alert(1)')).toBe(false);
    expect(contents.navigate('smb://nas.local/share')).toBe(false);
    expect(fake.shellCalls.openExternal).toHaveLength(3);
  });

  it('stops redirects away from the server origin without opening them anywhere', async () => {
    const { fake, desktop } = await launched();
    const contents = fake.windows[0]!.webContents;
    expect(contents.redirect(`${desktop.origin}/login`)).toBe(true);
    expect(contents.redirect('https://evil.example/')).toBe(false);
    expect(contents.redirect(`${desktop.origin}@evil.example/`)).toBe(false);
    expect(fake.shellCalls.openExternal).toEqual([]);
  });

  it('denies every new window and opens only http(s) links in the system browser', async () => {
    const { fake, desktop } = await launched();
    const contents = fake.windows[0]!.webContents;
    expect(contents.openWindow('https://example.org/')).toBe('deny');
    expect(contents.openWindow(`${desktop.origin}/instances`)).toBe('deny');
    expect(contents.openWindow('file:///etc/passwd')).toBe('deny');
    expect(contents.openWindow('javascript:alert(1)')).toBe('deny');
    expect(fake.shellCalls.openExternal).toEqual(['https://example.org/', `${desktop.origin}/instances`]);
    expect(fake.windows).toHaveLength(1);
  });

  it('denies every permission request and check, and refuses webviews', async () => {
    const { fake } = await launched();
    const contents = fake.windows[0]!.webContents;
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal', 'fileSystem']) {
      expect(await contents.session.request(permission), permission).toBe(false);
      expect(contents.session.check(permission), permission).toBe(false);
    }
    expect(contents.attachWebview()).toBe(false);
  });
});

describe('desktop instance, menu and quit', () => {
  it('a second launch quits at once and focuses the first window', async () => {
    const first = await launched();
    const window = first.fake.windows[0]!;
    window.minimize();

    const otherData = userDataDir();
    const second = await launch(otherData, {}, false);
    expect(second.desktop).toBeNull();
    expect(second.fake.app.quitCalls).toBe(1);
    expect(second.fake.windows).toHaveLength(0);
    expect(fs.readdirSync(otherData)).toEqual([]);

    // Electron tells the first instance through 'second-instance'.
    first.fake.app.emit('second-instance');
    expect(window.isMinimized()).toBe(false);
    expect(window.focusCount).toBe(1);
    expect(first.fake.windows).toHaveLength(1);
  });

  it('offers menu items that open the dashboard in the system browser and show the data folder', async () => {
    const { fake, desktop } = await launched();
    fake.menuItem('Open Dashboard in Browser')!.click!();
    fake.menuItem('Show Data Folder')!.click!();
    expect(fake.shellCalls.openExternal).toEqual([`${desktop.origin}/`]);
    expect(fake.shellCalls.openPath).toEqual([desktop.userData]);
    expect(fake.menuItem('Quit') ?? fake.menu()!.template.flatMap((i) => i.submenu ?? []).find((i) => i.role === 'quit')).toBeDefined();
  });

  it('quits cleanly: the HTTP server and the database are closed once, then the app exits; a second quit is harmless', async () => {
    const { fake, desktop, exited } = await launched();
    const { homefleet } = desktop;
    let closes = 0;
    const close = homefleet.close.bind(homefleet);
    homefleet.close = (drain) => {
      closes += 1;
      return close(drain);
    };
    // A browser-style keep-alive connection must not hold the quit up.
    expect((await fetch(`${desktop.origin}/api/health`, { headers: { connection: 'keep-alive' } })).status).toBe(200);

    fake.app.quit();
    expect(await exited).toBe(0);
    expect(desktop.server.listening).toBe(false);
    expect(homefleet.db.open).toBe(false);
    expect(closes).toBe(1);
    await expect(fetch(`${desktop.origin}/api/health`)).rejects.toThrow();
    // A clean close checkpoints the write-ahead log and removes it.
    expect(fs.existsSync(`${desktop.dbPath}-wal`)).toBe(false);

    fake.app.quit();
    await desktop.shutdown();
    expect(closes).toBe(1);
    expect(fake.app.exitCode).toBe(0);
  });

  it('quits when the last window closes on Linux and Windows', async () => {
    const { fake, exited } = await launched();
    fake.windows[0]!.close();
    expect(await exited).toBe(0);
  });

  it('stays running without windows on macOS and reopens the dashboard on activate', async () => {
    const { fake, desktop } = await launched(undefined, { platform: 'darwin' });
    fake.windows[0]!.close();
    expect(fake.app.exitCode).toBeNull();
    expect((await fetch(`${desktop.origin}/api/health`)).status).toBe(200);
    fake.app.emit('activate');
    expect(fake.windows).toHaveLength(2);
    // The setup token went to the first window; a later window starts at the dashboard.
    expect(fake.windows[1]!.loaded).toEqual([`${desktop.origin}/`]);
    expect(fake.menu()!.template[0]).toEqual({ role: 'appMenu' });
  });
});
