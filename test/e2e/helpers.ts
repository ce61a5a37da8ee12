import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { expect, onTestFinished } from 'vitest';
import { chromiumLaunchOptions } from '../../build/chromium.mjs';
import type { AppOptions } from '../../server/app.js';
import type { TestClient } from '../helpers/http.js';
import { ensureBuilt } from '../helpers/build.js';
import { startServer, type TestServer } from '../helpers/server.js';

export const root = path.resolve(import.meta.dirname, '../..');
export type Role = 'viewer' | 'operator' | 'administrator';


/** The renderer (and server) built from the current sources: once per run, by the vitest global setup. */
export const buildRenderer = ensureBuilt;

export interface Dashboard {
  server: TestServer;
  browser: Browser;
  /**
   * A fresh browser profile (no cookies) at the server; options such as viewport or colorScheme pass
   * through. It closes when the test that opened it ends (`keep`: when the file's dashboard stops).
   */
  newPage(options?: BrowserContextOptions, how?: { keep?: boolean }): Promise<Page>;
  /** Every browser error (console errors, CSP violations, uncaught exceptions) seen so far. */
  errors: string[];
  stop(): Promise<void>;
}

const worker = globalThis as { homefleetBrowser?: Promise<Browser> };
/**
 * The test worker's Chromium, launched on first use and shared by the files the worker runs one
 * after another (vitest's isolate: false); each test still gets a fresh context, so no cookie,
 * storage or cache crosses from one to the next. A launch costs a second of a worker and ~0.4
 * CPU-seconds, and 24 files launched one each. Playwright ends it when the worker exits.
 */
export async function sharedBrowser(): Promise<Browser> {
  const running = await worker.homefleetBrowser?.catch(() => undefined);
  if (running?.isConnected()) return running;
  worker.homefleetBrowser = chromiumLaunchOptions().then((options) => chromium.launch(options));
  return worker.homefleetBrowser;
}

/** Closes every context left open on the shared browser: a file's afterAll, as the worker runs one file at a time. */
export async function closeContexts(): Promise<void> {
  const browser = await worker.homefleetBrowser?.catch(() => undefined);
  await Promise.all((browser?.contexts() ?? []).map((context) => context.close().catch(() => {})));
}

/** The built dashboard on a real server on 127.0.0.1, and a real Chromium (the worker's, sharedBrowser). */
export async function startDashboard(options: Parameters<typeof startServer>[0] = {}): Promise<Dashboard> {
  await buildRenderer();
  const server = await startServer({ rendererDir: path.join(root, 'dist', 'renderer'), ...options });
  const browser = await sharedBrowser();
  const contexts: BrowserContext[] = [];
  const errors: string[] = [];
  return {
    server,
    browser,
    errors,
    async newPage(contextOptions = {}, { keep = false } = {}) {
      const context = await browser.newContext({ baseURL: server.baseUrl, ...contextOptions });
      contexts.push(context);
      // A page opened by a test closes when that test ends: left open, it would keep taking the
      // server's live events and redrawing through every later test of the file.
      if (!keep) {
        try {
          onTestFinished(() => context.close().catch(() => {}));
        } catch {
          // Opened in a hook for the whole file: closed by stop().
        }
      }
      const page = await context.newPage();
      page.on('console', (message) => {
        // A 401/403/404/409/422 a test provokes on purpose is logged by Chromium as a failed resource; the page handles it.
        // So is the 500 that run-now answers for a failed run (registry-service.md: "On a handler error the status is 500").
        const expected = /status of (40\d|42\d)/.test(message.text()) || (/status of 500/.test(message.text()) && /\/api\/jobs\/\d+\/run(\?dry_run=true)?$/.test(message.location().url));
        if (message.type() === 'error' && !expected) errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(error.message));
      return page;
    },
    async stop() {
      for (const context of contexts) await context.close().catch(() => {});
      await server.stop();
    },
  };
}

let accounts = 0;
/**
 * A new account with the given role and a known password, made the way an administrator would:
 * POST /api/users (temporary password), then the user's own first sign-in and password change.
 */
export async function createAccount(server: TestServer, role: Role): Promise<{ username: string; password: string; client: TestClient }> {
  const username = `${role}-${++accounts}-${process.pid}`;
  const password = `correct horse ${role} ${accounts}`;
  const created = await server.client.post('/api/users', { username, display_name: `Test ${role}`, role });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const own: TestClient = server.client.fresh();
  expect((await own.post('/api/auth/login', { username, password: created.body.temporary_password })).status).toBe(200);
  const changed = await own.post('/api/auth/password', { current_password: created.body.temporary_password, new_password: password });
  expect(changed.status).toBe(204);
  return { username, password, client: own };
}

/** The page does not scroll sideways: nothing is wider than the window. */
export const noSidewaysScroll = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= innerWidth);

/** Fills in the sign-in page on screen and presses Sign in. */
export async function fillLogin(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/**
 * A new account of the given role, signed in, its page at `goTo`. The session is the one its own first
 * sign-in through the real login route made (createAccount), handed to the browser as its cookie: the
 * login page itself is tested in auth.test.ts and signin.test.ts, and loading it for every test cost
 * Chromium a page load each.
 */
export async function signIn(page: Page, server: TestServer, role: Role = 'administrator', goTo = '/instances'): Promise<string> {
  const { username, client } = await createAccount(server, role);
  await page.context().addCookies(client.cookieEntries().map(([name, value]) => ({ name, value, url: server.baseUrl, httpOnly: true, sameSite: 'Lax' as const })));
  await page.goto(goTo);
  return username;
}

/** The VMIDs of the instance rows the page currently renders, top to bottom. */
export function renderedVmids(page: Page): Promise<number[]> {
  return page.locator('table.instances tbody tr[data-vmid]').evaluateAll((rows) => rows.map((row) => Number((row as HTMLElement).dataset.vmid)));
}

/** Creates instances through the API as the default (administrator) client. */
export async function seedInstances(server: TestServer, bodies: Record<string, unknown>[]): Promise<void> {
  for (const body of bodies) {
    const res = await server.client.post('/api/instances', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}

/** A fetch made by the page itself, with its cookie and Origin, to see what the server answers a forced write. */
export function pageFetch(page: Page, method: string, url: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  return page.evaluate(
    async ([method, url, body]) => {
      const res = await fetch(url as string, {
        method: method as string,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json().catch(() => null) };
    },
    [method, url, body] as const,
  );
}
