import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD } from '../helpers/server.js';
import { fillLogin, pageFetch, startDashboard, type Dashboard } from './helpers.js';

// One server with FLEET_REQUIRE_2FA=administrators for the whole file: the administrator's TOTP flow,
// then a viewer's passkeys (the viewer is not in the requirement's scope).
let dash: Dashboard;
/** The administrator's browser, signed in by the first test (with a recovery code). */
let adminPage: Page;
beforeAll(async () => {
  dash = await startDashboard({ config: { require2fa: 'administrators' } });
});
afterAll(() => dash?.stop());

const code = (secret: string, ms = Date.now()) => new TOTP({ secret }).generate({ timestamp: ms });

/** Signs in through the sign-in page and waits to leave it. */
async function fillLoginAt(page: Page, username: string, password: string) {
  await page.goto('/login?next=%2Finstances');
  await fillLogin(page, username, password);
  await page.waitForURL('**/instances');
}

describe('two-step sign-in in Chromium', () => {
  it('an administrator without a second factor is sent to set one up first; then the password alone is not enough', async () => {
    const page = await dash.newPage();
    await page.goto('/jobs');
    await page.waitForURL('**/login?next=*');
    await fillLogin(page, 'admin', ADMIN_PASSWORD);
    // FLEET_REQUIRE_2FA=administrators: "sent to set one up before anything else".
    await page.waitForURL('**/account?next=*');
    await page.getByTestId('second-factor-required').waitFor();
    expect((await pageFetch(page, 'GET', '/api/instances')).status).toBe(403);
    await page.goto('/users');
    await page.waitForURL('**/account?next=*');

    await page.getByRole('button', { name: 'Set up two-step sign-in' }).click();
    const qr = page.getByRole('img', { name: 'QR code of the two-step sign-in secret' });
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
    const secret = (await page.getByTestId('totp-secret').textContent())!;
    await page.getByLabel('Code from the app').fill('000000' === code(secret) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('alert').filter({ hasText: 'not the current code' }).waitFor();
    await page.getByLabel('Code from the app').fill(code(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const shown = (await page.getByTestId('recovery-codes').locator('pre').textContent())!.split('\n');
    expect(shown).toHaveLength(10);
    await page.getByRole('button', { name: 'I saved them' }).click();
    await page.waitForURL('**/users');
    await page.getByRole('heading', { name: 'Users' }).waitFor();

    // A fresh browser: the password leads to the code step, not into the fleet.
    const other = await dash.newPage();
    await other.goto('/login?next=%2Finstances');
    await fillLogin(other, 'admin', ADMIN_PASSWORD);
    await other.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    expect((await pageFetch(other, 'GET', '/api/instances')).status).toBe(401);
    // The code the setup used was accepted once; the next step's code is new.
    await other.getByLabel('Code from your authenticator app').fill(code(secret, Date.now() + 30_000));
    await other.getByRole('button', { name: 'Continue' }).click();
    await other.waitForURL('**/instances');
    expect((await pageFetch(other, 'GET', '/api/instances')).status).toBe(200);

    // A recovery code works in place of the app, once. This administrator's page serves the passkey test too.
    const third = await dash.newPage({}, { keep: true });
    await third.goto('/login');
    await fillLogin(third, 'admin', ADMIN_PASSWORD);
    await third.getByRole('button', { name: 'Use a recovery code' }).click();
    await third.getByLabel('Recovery code').fill(shown[0]!);
    await third.getByRole('button', { name: 'Continue' }).click();
    await third.waitForURL('**/instances');
    adminPage = third;
    expect(dash.errors).toEqual([]);
  }, 60_000);
});

/** A CTAP2 authenticator with a PIN-less user verification, as a phone or a laptop's platform key. */
async function virtualAuthenticator(context: BrowserContext, page: Page, session?: CDPSession): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = session ?? (await context.newCDPSession(page));
  if (!session) await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return { cdp, authenticatorId };
}

describe('passkeys in Chromium (virtual authenticator)', () => {
  it('registers two named passkeys, renames and removes one; the other signs in without a password on a fresh browser context', async () => {
    const viewer = await dash.server.accounts.create({ username: 'keyholder', display_name: 'Key Holder', role: 'viewer', password: 'a long viewer password' });
    // Passkeys need a host name (browsers refuse an IP address as the relying party ID): localhost.
    const localhost = dash.server.baseUrl.replace('127.0.0.1', 'localhost');
    const page = await dash.newPage({ baseURL: localhost });
    const first = await virtualAuthenticator(page.context(), page);
    await page.goto('/login?next=%2Faccount');
    await fillLogin(page, viewer.username, 'a long viewer password');
    await page.waitForURL('**/account');
    const credentials = [];
    // One authenticator holds one passkey of an account (the server lists the existing ones to exclude): a second device for the second.
    for (const [name, authenticator] of [['Laptop', first], ['Phone', undefined]] as const) {
      const device = authenticator ?? (await virtualAuthenticator(page.context(), page, first.cdp));
      await page.getByLabel('Name of the new passkey').fill(name);
      // A session alone adds no passkey (issue 34): a wrong password is refused, the right one goes on.
      if (!authenticator) {
        await page.getByLabel('Your password').fill('not the password');
        await page.getByRole('button', { name: 'Add a passkey' }).click();
        await page.getByRole('alert').filter({ hasText: /wrong password/i }).waitFor();
        expect(new URL(page.url()).pathname).toBe('/account');
      }
      await page.getByLabel('Your password').fill('a long viewer password');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.getByText(`Passkey “${name}” added.`).waitFor();
      const held = await device.cdp.send('WebAuthn.getCredentials', { authenticatorId: device.authenticatorId });
      expect(held.credentials).toHaveLength(1);
      credentials.push(held.credentials[0]!);
      await device.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: device.authenticatorId });
    }
    const keys = page.getByTestId('passkeys').locator('li');
    await expect.poll(() => keys.count()).toBe(2);
    await keys.filter({ hasText: 'Phone' }).getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('New name').fill('Old phone');
    await page.getByRole('button', { name: 'Save' }).click();
    await keys.filter({ hasText: 'Old phone' }).waitFor();
    await keys.filter({ hasText: 'Old phone' }).getByRole('button', { name: 'Remove…' }).click();
    await page.getByRole('button', { name: 'Remove passkey' }).click();
    await expect.poll(() => keys.count()).toBe(1);
    const laptop = (await pageFetch(page, 'GET', '/api/auth/passkeys')).body as { name: string }[];
    expect(laptop.map((k) => k.name)).toEqual(['Laptop']);
    await keys.filter({ hasText: 'Laptop' }).getByTestId('added-since-password-change').waitFor();

    // A fresh browser context (no cookies) with the same authenticator: each of its keys tried.
    const signedIn: number[] = [];
    for (const credential of credentials) {
      const fresh = await dash.newPage({ baseURL: localhost });
      const second = await virtualAuthenticator(fresh.context(), fresh);
      await second.cdp.send('WebAuthn.addCredential', { authenticatorId: second.authenticatorId, credential });
      await fresh.goto('/login?next=%2Finstances');
      await fresh.getByRole('button', { name: 'Use a passkey' }).click();
      const outcome = await Promise.race([
        fresh.waitForURL('**/instances').then(() => 200),
        fresh.getByRole('alert').waitFor().then(() => 401),
      ]);
      signedIn.push(outcome);
      if (outcome === 200) expect((await pageFetch(fresh, 'GET', '/api/auth/session')).body).toMatchObject({ user: { username: 'keyholder' } });
    }
    // The laptop's key signs in; the removed phone's key no longer does.
    expect(signedIn.sort()).toEqual([200, 401]);
    const audit = (dash.server.db.prepare("SELECT action, summary FROM audit_log WHERE target = 'keyholder' ORDER BY id").all() as { action: string; summary: string }[]);
    expect(audit.map((e) => e.action)).toEqual(expect.arrayContaining(['passkey.add', 'passkey.rename', 'passkey.remove', 'login.success']));
    expect(audit.find((e) => e.action === 'login.success' && /passkey/.test(e.summary))).toBeDefined();
    // With a passkey, the password alone no longer signs in (issue 34): the page asks for the passkey next.
    const signedInViewer = await dash.newPage({ baseURL: localhost });
    const held = await virtualAuthenticator(signedInViewer.context(), signedInViewer);
    // The laptop's key, past the signature count its last sign-in left on the server (a copy that lags behind is refused).
    await held.cdp.send('WebAuthn.addCredential', { authenticatorId: held.authenticatorId, credential: { ...credentials[0]!, signCount: 1000 } });
    await signedInViewer.goto('/login?next=%2Finstances');
    await fillLogin(signedInViewer, 'keyholder', 'a long viewer password');
    await signedInViewer.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    expect((await pageFetch(signedInViewer, 'GET', '/api/instances')).status).toBe(401);
    await signedInViewer.getByRole('button', { name: 'Use your passkey' }).click();
    await signedInViewer.waitForURL('**/instances');
    expect((await pageFetch(signedInViewer, 'GET', '/api/auth/session')).body).toMatchObject({ user: { username: 'keyholder' } });
    // The administrator clears the viewer's second factors from the Users page: the remaining passkey goes, the viewer is signed out.
    await adminPage.goto('/users');
    const keyholder = adminPage.locator('tr', { hasText: 'keyholder' });
    await expect.poll(() => keyholder.getByTestId('sign-in-factors').textContent()).toBe('1 passkey');
    await keyholder.getByRole('button', { name: 'Clear second factor…' }).click();
    await adminPage.getByRole('button', { name: 'Clear second factor', exact: true }).click();
    await adminPage.getByText('The second factor of keyholder was cleared.').waitFor();
    // Nothing is left to clear: the row says so and the button is off.
    await expect.poll(() => keyholder.getByTestId('sign-in-factors').textContent()).toBe('password only');
    expect(await keyholder.getByRole('button', { name: 'Clear second factor…' }).isDisabled()).toBe(true);
    expect(dash.server.db.prepare('SELECT count(*) AS n FROM passkeys').get()).toEqual({ n: 0 });
    expect((await pageFetch(signedInViewer, 'GET', '/api/auth/session')).status).toBe(401);

    // The removed key names no account: the failure is logged without one.
    const failed = dash.server.db.prepare("SELECT summary FROM audit_log WHERE action = 'login.failure' ORDER BY id DESC LIMIT 1").get() as { summary: string };
    expect(failed.summary).toBe('passkey sign-in failed from 127.0.0.1');
    expect(dash.errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  }, 60_000);
});
