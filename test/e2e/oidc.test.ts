import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendBytes, startBuiltServer, type BuiltServer } from '../helpers/built-server.js';
import { startProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { closeContexts, sharedBrowser } from './helpers.js';

// The built server (dist/server/main.js) signing people in through a real OpenID provider on 127.0.0.1,
// driven by Chromium through the whole redirect flow. One provider and one server for the file.
// Every refused sign-in counts in 127.0.0.1's login window (10 per 15 minutes) and the file refuses 9:
// a new refusal case needs a server of its own.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-oidc-'));
const CLIENT_SECRET = 'client-secret-that-must-stay-hidden';
let provider: TestProvider;
let server: BuiltServer;
let browser: Browser;

beforeAll(async () => {
  provider = await startProvider();
  server = await startBuiltServer({
    DB_PATH: path.join(dir, 'homefleet.db'),
    FLEET_SETUP_TOKEN: 'oidc-test-setup-token',
    FLEET_AUTH_ALLOW_HTTP: 'true',
    FLEET_OIDC_ISSUER: provider.issuer,
    FLEET_OIDC_CLIENT_ID: 'homefleet',
    FLEET_OIDC_CLIENT_SECRET: CLIENT_SECRET,
    FLEET_OIDC_NAME: 'Test IdP',
    // The README's Pocket ID settings (its groups come with a scope of their own); the claim is the default, groups.
    FLEET_OIDC_SCOPES: 'openid profile email groups',
    // No `*`: a person none of whose groups is mapped is refused.
    FLEET_OIDC_ROLE_MAP: 'fleet-admins=administrator,fleet-ops=operator,fleet-view=viewer',
  });
  provider.register({ client_id: 'homefleet', client_secret: CLIENT_SECRET, redirect_uris: [`${server.url}/api/auth/oidc/callback`] });
  browser = await sharedBrowser();
}, 60_000);
afterAll(async () => {
  await closeContexts();
  await server?.stop();
  await provider?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ baseURL: server.url });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return page;
}

/** From homefleet's sign-in page through the provider's form (when the provider has no session yet) and back. */
async function signInWithProvider(page: Page, login: string, next = '/instances'): Promise<void> {
  await page.goto(`/login?next=${encodeURIComponent(next)}`);
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await page.waitForURL((url) => url.origin === provider.issuer || landed(url));
  if (new URL(page.url()).origin === provider.issuer) {
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
  }
  await page.waitForURL(landed);
}

/** Back at homefleet: signed in somewhere, or on the sign-in page with the refusal's code. */
const landed = (url: URL) => url.origin === server.url && url.pathname !== '/api/auth/oidc/callback' && (url.pathname !== '/login' || url.searchParams.has('sso_error'));

/**
 * Starts a flow in `page`'s browser and follows the provider's redirects (with the browser's cookies)
 * up to, not into, homefleet's callback: the address the provider sends the browser back to.
 */
async function providerAnswer(page: Page, next = '/instances'): Promise<string> {
  let url = `${server.url}/api/auth/oidc/start?next=${encodeURIComponent(next)}`;
  for (let hops = 0; hops < 10; hops++) {
    const res = await page.context().request.get(url, { maxRedirects: 0 });
    const location = res.headers().location;
    if (!location) throw new Error(`no redirect from ${url}: ${res.status()}`);
    url = new URL(location, url).href;
    if (url.startsWith(`${server.url}/api/auth/oidc/callback?`)) return url;
  }
  throw new Error('the provider did not send the browser back');
}

const session = (page: Page) =>
  page.evaluate(async () => {
    const res = await fetch('/api/auth/session');
    return { status: res.status, body: (await res.json()) as { user?: { username: string; role: string } } };
  });

describe('single sign-on through an OpenID provider (built server, Chromium)', () => {
  it('creates the account with the mapped role, follows a changed group at the next sign-in and signs the other sessions out', async () => {
    provider.people.set('alice-sub', { preferred_username: 'alice', name: 'Alice A.', groups: ['fleet-ops', 'staff'], email: 'root@example.org' });
    const methods = await (await fetch(`${server.url}/api/auth/methods`)).json();
    expect(methods).toEqual({ password: true, oidc: { name: 'Test IdP' }, passkeys: false });

    const laptop = await newPage();
    await signInWithProvider(laptop, 'alice-sub', '/jobs?x=1');
    expect(new URL(laptop.url()).pathname + new URL(laptop.url()).search).toBe('/jobs?x=1');
    expect(await session(laptop)).toMatchObject({ status: 200, body: { user: { username: 'alice', display_name: 'Alice A.', role: 'operator' } } });

    const phone = await newPage();
    await signInWithProvider(phone, 'alice-sub');
    expect((await session(phone)).body.user?.role).toBe('operator');

    // The provider moves alice to the administrators: her next sign-in carries the new role, and her other sessions end.
    provider.people.set('alice-sub', { preferred_username: 'alice', groups: ['fleet-admins'] });
    await signInWithProvider(laptop, 'alice-sub');
    expect((await session(laptop)).body.user?.role).toBe('administrator');
    expect((await session(phone)).status).toBe(401);

    // A second person with the same preferred_username gets a name of their own; e-mail links nothing.
    provider.people.set('other-sub', { preferred_username: 'alice', groups: ['fleet-view'], email: 'root@example.org' });
    const other = await newPage();
    await signInWithProvider(other, 'other-sub');
    expect((await session(other)).body.user).toMatchObject({ username: 'alice-2', role: 'viewer' });

    // No mapped group and no `*`: refused, no account made.
    provider.people.set('nobody-sub', { preferred_username: 'nobody', groups: ['staff'] });
    const nobody = await newPage();
    await signInWithProvider(nobody, 'nobody-sub');
    expect(new URL(nobody.url()).searchParams.get('sso_error')).toBe('role');
    await nobody.getByText('no group that homefleet maps to a role').waitFor();
    expect((await session(nobody)).status).toBe(401);

    const users = await laptop.evaluate(async () => (await (await fetch('/api/users')).json()) as { id: number; username: string }[]);
    expect(users.map((u) => u.username).sort()).toEqual(['alice', 'alice-2']);

    // A disabled account stays refused, whatever the provider says.
    const second = users.find((u) => u.username === 'alice-2')!;
    const disabled = await laptop.evaluate(async (id) => (await fetch(`/api/users/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ enabled: false }) })).status, second.id);
    expect(disabled).toBe(200);
    await signInWithProvider(other, 'other-sub');
    expect(new URL(other.url()).searchParams.get('sso_error')).toBe('disabled');
    expect((await session(other)).status).toBe(401);

    // Groups that would demote the last enabled administrator refuse the sign-in instead (as an administrator's own change would be).
    provider.people.set('alice-sub', { preferred_username: 'alice', groups: ['fleet-ops'] });
    await signInWithProvider(laptop, 'alice-sub');
    expect(new URL(laptop.url()).searchParams.get('sso_error')).toBe('last_admin');
  }, 60_000);

  it('refuses a tampered ID token (signature, audience, nonce, expiry), a state from another browser, and a next off the origin', async () => {
    provider.people.set('bob-sub', { preferred_username: 'bob', groups: ['fleet-ops'] });
    const page = await newPage();
    await signInWithProvider(page, 'bob-sub');
    expect((await session(page)).status).toBe(200);
    await page.evaluate(() => fetch('/api/auth/logout', { method: 'POST' }));

    for (const tamper of ['signature', 'audience', 'nonce', 'expiry'] as const) {
      provider.tamper = tamper;
      await signInWithProvider(page, 'bob-sub');
      expect([tamper, new URL(page.url()).searchParams.get('sso_error')]).toEqual([tamper, 'token']);
      expect((await session(page)).status).toBe(401);
    }

    // The state is bound to the browser that started: the provider's answer opened in another browser is refused...
    const answer = await providerAnswer(page);
    const stranger = await newPage();
    await stranger.goto(answer);
    expect(new URL(stranger.url()).searchParams.get('sso_error')).toBe('state');
    expect((await session(stranger)).status).toBe(401);
    // ...and so is a changed state in the browser that started.
    const changed = new URL(await providerAnswer(page));
    changed.searchParams.set('state', 'x'.repeat(43));
    await page.goto(changed.href);
    expect(new URL(page.url()).searchParams.get('sso_error')).toBe('state');
    expect((await session(page)).status).toBe(401);
    // The untouched answer in the browser that started signs in.
    await page.goto(await providerAnswer(page));
    expect((await session(page)).status).toBe(200);

    // 2,000 anonymous starts from one client (issue 34: they pushed every flow out of a 1,000-entry
    // store) leave the flow this browser started before them intact.
    const started = await providerAnswer(page, '/jobs');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      let sent = 0;
      const statuses = new Set<number>();
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (sent < 2000) {
          sent++;
          statuses.add((await sendBytes(`${server.url}/api/auth/oidc/start?next=%2F`, 'GET', {}, undefined, agent)).status);
        }
      }));
      expect([...statuses]).toEqual([302]);
    } finally {
      agent.destroy();
    }
    await page.goto(started);
    expect([new URL(page.url()).pathname, (await session(page)).status]).toEqual(['/jobs', 200]);

    // `next` never leaves the origin, also when its dot segments resolve to `//host` (issue 34): the
    // callback's Location is read, not followed, so a regression sends no browser to the internet.
    for (const next of ['/.//evil.example', '/..//evil.example/x', '/%2e%2e//evil.example', '/./\\evil.example', '/\tevil.example', '/\t/evil.example', '/\n/evil.example']) {
      const back = await page.context().request.get(await providerAnswer(page, next), { maxRedirects: 0 });
      const location = back.headers().location ?? '';
      expect([next, back.status(), location.startsWith('/') && !location.startsWith('//') && !location.startsWith('/\\')]).toEqual([next, 303, true]);
      expect([next, new URL(location, server.url).origin]).toEqual([next, server.url]);
    }
    expect((await session(page)).status).toBe(200);
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
      await page.goto(`/api/auth/oidc/start?next=${encodeURIComponent(next)}`);
      await page.waitForURL(landed);
      expect([next, new URL(page.url()).origin]).toEqual([next, server.url]);
      expect((await session(page)).status).toBe(200);
    }

    const stopped = await server.stop();
    expect(stopped.all).not.toContain(CLIENT_SECRET);
    const audit = await import('better-sqlite3').then(({ default: Database }) => {
      const db = new Database(path.join(dir, 'homefleet.db'), { readonly: true });
      try {
        return db.prepare("SELECT action, summary FROM audit_log WHERE action LIKE 'login.%' OR action LIKE 'user.%'").all() as { action: string; summary: string }[];
      } finally {
        db.close();
      }
    });
    expect(JSON.stringify(audit)).not.toContain(CLIENT_SECRET);
    expect(audit.filter((e) => e.action === 'login.failure' && /ID token checks/.test(e.summary))).toHaveLength(4);
    expect(audit.some((e) => e.action === 'login.success' && e.summary === 'bob signed in with single sign-on from 127.0.0.1')).toBe(true);
  }, 90_000);
});
