// Settings → Notifications in Chromium: a channel's stored secret is kept only for the server it was
// saved with, and the form says so as soon as the server box changes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { signIn, startDashboard, type Dashboard } from './helpers.js';

let dash: Dashboard;
let trusted: Receiver;
let listener: Receiver;
beforeAll(async () => {
  dash = await startDashboard();
  trusted = await startReceiver();
  listener = await startReceiver();
});
afterAll(async () => {
  await dash?.stop();
  await trusted?.close();
  await listener?.close();
});

it('a new server asks for the token again; saved without it, the refusal is beside the box and the new server gets nothing', async () => {
  const created = await dash.server.client.post('/api/notifications/channels', { name: 'gotify', type: 'gotify', config: { server: trusted.url, token: 'gotify-stored-token' }, rules: 'all' });
  expect(created.status).toBe(201);
  const page = await dash.newPage();
  await signIn(page, dash.server, 'administrator', '/settings');
  await page.locator('tr[data-channel="gotify"]').getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByTestId('channel-edit-form');
  const hint = edit.locator(`#channel-${created.body.id}-token-hint`);
  await expect.poll(() => hint.textContent()).toBe('A value is stored (not shown): leave empty to keep it.');

  await edit.getByLabel('Server').fill(listener.url);
  await expect.poll(() => hint.textContent()).toBe('The destination changed: enter it again. A stored secret is only sent where it was saved for.');
  await edit.getByRole('button', { name: 'Save channel' }).click();
  await expect.poll(() => edit.locator(`#channel-${created.body.id}-token-error`).textContent()).toBe('must be entered again when the server changes');
  expect(await edit.getByRole('alert').textContent()).toBe('Token must be entered again when the server changes.');

  await page.locator('tr[data-channel="gotify"]').getByRole('button', { name: 'Send a test' }).click();
  await expect.poll(() => page.getByText('Test message sent to gotify.').count()).toBe(1);
  expect(trusted.received.map((r) => r.headers['x-gotify-key'])).toEqual(['gotify-stored-token']);
  expect(listener.received).toEqual([]);
  expect(dash.errors).toEqual([]);
});
