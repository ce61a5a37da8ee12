import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, fillLogin, pageFetch, startDashboard, type Dashboard } from './helpers.js';

// Needs the access layer (branch `access`): written to PRODUCT.md's "Access layer interface".
describe('signing in, sessions and accounts in Chromium', () => {
  let dash: Dashboard;
  beforeAll(async () => {
    dash = await startDashboard();
    await dash.server.client.post('/api/instances', { vmid: 501, name: 'alpha', state: 'testing', stack: 'development' });
  });
  afterAll(() => dash?.stop());

  it('an anonymous visit goes to sign-in and returns to the page asked for; a wrong password is a message', async () => {
    const { username, password } = await createAccount(dash.server, 'viewer');
    const page = await dash.newPage();
    await page.goto('/instances?state=testing');
    await page.waitForURL('**/login?next=*');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/instances?state=testing');

    await fillLogin(page, username, 'not the password');
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong username or password.');

    await fillLogin(page, username, password);
    await page.waitForURL('**/instances?state=testing');
    await expect.poll(() => page.locator('tr[data-vmid="501"]').count()).toBe(1);
    await expect.poll(() => page.locator('.account .who').textContent()).toContain(username);
  });

  it('a temporary password must be changed before anything else', async () => {
    const created = await dash.server.client.post('/api/users', { username: 'newcomer', display_name: 'New Comer', role: 'operator' });
    const page = await dash.newPage();
    await page.goto('/jobs');
    await page.waitForURL('**/login?next=*');
    await fillLogin(page, 'newcomer', created.body.temporary_password);
    await page.waitForURL('**/password?next=*');
    await page.getByText('Your password is temporary').waitFor();
    await page.getByLabel('Current password').fill(created.body.temporary_password);
    await page.getByLabel('New password', { exact: true }).fill('a brand new secret');
    await page.getByLabel('Repeat the new password').fill('a brand new secret');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForURL('**/jobs');
    const fresh = dash.server.client.fresh();
    expect((await fresh.post('/api/auth/login', { username: 'newcomer', password: 'a brand new secret' })).status).toBe(200);
  });

  it('when the session ends the next request returns to sign-in with the page remembered', async () => {
    const { username, password } = await createAccount(dash.server, 'operator');
    const page = await dash.newPage();
    // Without the live stream (a proxy that ends it, say) the next request is what finds the session
    // gone; with it, the page goes at once (test/e2e/live.test.ts). The stream opens and ends, and the
    // browser would retry in ten minutes: a stream that failed outright would have the page ask
    // /api/auth/session on each retry, and one of those could find the session gone first.
    await page.route('**/api/events*', (route) => route.fulfill({ status: 200, contentType: 'text/event-stream', body: ': connected\nretry: 600000\n\n' }));
    await page.goto('/login?next=%2Finstances%2F501');
    await fillLogin(page, username, password);
    await page.waitForURL('**/instances/501');
    await page.getByRole('link', { name: 'Edit' }).waitFor(); // the page has loaded with the live session

    const users = (await dash.server.client.get('/api/users')).body as { id: number; username: string }[];
    const id = users.find((u) => u.username === username)!.id;
    expect((await dash.server.client.post(`/api/users/${id}/revoke-sessions`)).status).toBe(204);

    await page.getByRole('link', { name: 'Edit' }).click(); // its GET answers 401 now
    await page.waitForURL('**/login?next=*');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/instances/501/edit');
    await fillLogin(page, username, password);
    await page.waitForURL('**/instances/501/edit');
  });

  it('sign out ends the session', async () => {
    const { username, password } = await createAccount(dash.server, 'viewer');
    const page = await dash.newPage();
    await page.goto('/login');
    await fillLogin(page, username, password);
    await page.waitForURL('**/instances');
    await page.getByRole('button', { name: username }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/login');
    await page.goto('/instances');
    await page.waitForURL('**/login?next=*');
  });

  it('an administrator manages users: temporary password shown once, role change, disable, reset, revoke; audit lists it', async () => {
    const { username, password } = await createAccount(dash.server, 'administrator');
    const page = await dash.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dash.server.baseUrl });
    await page.goto('/login?next=%2Fusers');
    await fillLogin(page, username, password);
    await page.waitForURL('**/users');

    await page.getByLabel('Username').fill('dana');
    await page.getByLabel('Display name').fill('Dana');
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Create user' }).click();
    const shown = page.getByTestId('temporary-password');
    await expect.poll(() => shown.isVisible()).toBe(true);
    const temporary = (await shown.locator('code').textContent())!;
    expect(temporary.length).toBeGreaterThanOrEqual(8);
    await shown.getByRole('button', { name: 'Copy password' }).click();
    await expect.poll(() => shown.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(temporary);
    expect((await dash.server.client.fresh().post('/api/auth/login', { username: 'dana', password: temporary })).status).toBe(200);

    const row = page.locator('tr[data-user="dana"]');
    // A role change asks first; Cancel puts the list back and changes nothing.
    await row.getByLabel('Role of dana').selectOption('administrator');
    await expect.poll(() => row.getByRole('group').textContent()).toContain('Make dana administrator?');
    await row.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => row.getByLabel('Role of dana').inputValue()).toBe('viewer');
    await row.getByLabel('Role of dana').selectOption('operator');
    await expect.poll(() => row.getByRole('button', { name: 'Change role' }).count()).toBe(1);
    expect(((await dash.server.client.get('/api/users')).body as any[]).find((u) => u.username === 'dana').role).toBe('viewer');
    await row.getByRole('button', { name: 'Change role' }).click();
    await expect.poll(async () => ((await dash.server.client.get('/api/users')).body as any[]).find((u) => u.username === 'dana').role).toBe('operator');
    await expect.poll(() => page.getByRole('status').first().textContent()).toBe('dana is now operator.');
    // A later click replaces the once-shown password.
    await expect.poll(() => shown.count()).toBe(0);

    // Disable, reset password and revoke sessions each ask first, naming dana; Cancel changes nothing.
    const dana = async () => ((await dash.server.client.get('/api/users')).body as any[]).find((u) => u.username === 'dana');
    await row.getByRole('button', { name: 'Disable…' }).click();
    const disable = row.getByRole('group', { name: 'Confirm: Disable dana' });
    await expect.poll(() => disable.textContent()).toContain('Disable dana? They are signed out at once');
    await disable.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => disable.count()).toBe(0);
    expect((await dana()).enabled).toBe(true);
    await row.getByRole('button', { name: 'Disable…' }).click();
    await disable.getByRole('button', { name: 'Disable dana' }).click();
    await expect.poll(() => row.getByRole('button', { name: 'Enable' }).count()).toBe(1);
    expect((await dana()).enabled).toBe(false);

    await row.getByRole('button', { name: 'Reset password…' }).click();
    const reset = row.getByRole('group', { name: 'Confirm: Reset password' });
    await expect.poll(() => reset.textContent()).toContain('Reset the password of dana?');
    expect(await shown.count()).toBe(0);
    await reset.getByRole('button', { name: 'Reset password', exact: true }).click();
    await expect.poll(() => shown.textContent()).toContain('dana');
    expect(await shown.locator('code').textContent()).not.toBe(temporary);

    await row.getByRole('button', { name: 'Revoke sessions…' }).click();
    const revoke = row.getByRole('group', { name: 'Confirm: Sign out everywhere' });
    await expect.poll(() => revoke.textContent()).toContain('Sign dana out everywhere?');
    await revoke.getByRole('button', { name: 'Sign out everywhere' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('signed out everywhere');

    // The Actions column lines up: every row's buttons start where its heading does.
    const heading = (await page.locator('table.users th', { hasText: 'Actions' }).boundingBox())!;
    for (const cell of await page.locator('table.users tbody td.actions-cell').all()) {
      expect(Math.abs((await cell.boundingBox())!.x - heading.x)).toBeLessThan(1);
    }

    await page.getByRole('link', { name: 'Audit' }).click();
    await expect.poll(() => page.locator('table.log tbody tr').count()).toBeGreaterThan(0);
    const sentences = () => page.locator('table.log td.what').allTextContents();
    expect(await sentences()).toEqual(
      expect.arrayContaining([
        `${username} signed in from 127.0.0.1`,
        `${username} created user dana (viewer)`,
        `${username} changed user dana: role viewer → operator`,
        `${username} disabled user dana`,
        `${username} reset the password of dana`,
        `${username} signed dana out everywhere`,
      ]),
    );
    // The raw entry is one click away.
    const created = page.locator('table.log tbody tr', { hasText: `${username} created user dana` }).first();
    expect(await created.locator('pre').isVisible()).toBe(false);
    await created.locator('summary').click();
    await expect.poll(() => created.locator('pre').isVisible()).toBe(true);
    expect(JSON.parse((await created.locator('pre').textContent())!)).toMatchObject({ action: 'user.create', actor: username, target: 'dana' });
    // With it, what changed, field by field, before and after.
    const changed = page.locator('table.log tbody tr', { hasText: `${username} changed user dana: role` }).first();
    await changed.locator('summary').click();
    await expect.poll(() => changed.getByRole('list', { name: 'Fields changed' }).textContent()).toBe('role: “viewer” → “operator”');

    // Filters: by who, by what, by time.
    await page.getByLabel('What').selectOption('login.failure');
    await expect.poll(sentences).toEqual(expect.arrayContaining([expect.stringMatching(/^login failed for .+ from 127\.0\.0\.1$/)]));
    expect((await sentences()).every((line) => line.startsWith('login failed for'))).toBe(true);
    await page.getByLabel('What').selectOption('');
    await page.getByLabel('Who').selectOption(username);
    await expect.poll(async () => (await sentences()).length > 0 && (await sentences()).every((line) => line.startsWith(username))).toBe(true);
    await expect.poll(() => page.getByTestId('audit-counts').textContent()).toMatch(/^\d+ of the \d+ loaded entries match\.$/);
    await page.getByLabel('From').fill('2099-01-01T00:00');
    await expect.poll(() => page.getByText('No loaded entry matches these filters').count()).toBe(1);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(async () => (await sentences()).length).toBeGreaterThan(6);
  });

  it('a role change that would leave no administrator is refused, saying what and why', async () => {
    const { username, password } = await createAccount(dash.server, 'administrator');
    const page = await dash.newPage();
    await page.goto('/login?next=%2Fusers');
    await fillLogin(page, username, password);
    await page.waitForURL('**/users');
    // Every other administrator is disabled (by this one's own session, the last in the file to need one): this one is the last.
    const users = (await dash.server.client.get('/api/users')).body as { id: number; username: string; role: string; enabled: boolean }[];
    for (const other of users.filter((u) => u.role === 'administrator' && u.enabled && u.username !== username)) {
      expect((await pageFetch(page, 'PATCH', `/api/users/${other.id}`, { enabled: false })).status).toBe(200);
    }
    await page.reload();

    const row = page.locator(`tr[data-user="${username}"]`);
    await row.getByLabel(`Role of ${username}`).selectOption('viewer');
    await row.getByRole('button', { name: 'Change role' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe(`Refused: ${username} is the last enabled administrator; make another administrator first.`);
    await expect.poll(() => row.getByLabel(`Role of ${username}`).inputValue()).toBe('administrator');
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(dash.errors).toEqual([]);
  });
});
