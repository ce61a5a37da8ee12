import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sshKeygen } from '../helpers/ssh-keys.js';
import { signIn, startDashboard, type Dashboard } from './helpers.js';

describe('Settings → Server keys and Cloud configs', () => {
  let dash: Dashboard;
  beforeAll(async () => {
    dash = await startDashboard();
  });
  afterAll(() => dash?.stop());

  it('an administrator adds a key and sees its fingerprint, is told a private key is refused, deletes the key after confirming', async () => {
    const made = sshKeygen(['-t', 'ed25519'], 'alice@laptop');
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/settings');
    const keys = page.getByTestId('server-keys');
    await keys.getByText('No server key yet.').waitFor();

    await keys.getByLabel('Name').fill('Alice laptop');
    await keys.getByLabel('Public key (the line of the .pub file)').fill(made.pub);
    await keys.getByRole('button', { name: 'Add server key' }).click();
    const row = keys.locator('tr[data-key="Alice laptop"]');
    await expect.poll(() => row.getByTestId('fingerprint').textContent()).toBe(made.listed.fingerprint);
    expect(await row.textContent()).toContain('alice@laptop');
    // The fingerprint wraps rather than pushing the row's button out of the card at 1280 px.
    const overhang = async () => {
      const [button, card] = await Promise.all([row.getByRole('button', { name: 'Delete' }).boundingBox(), keys.boundingBox()]);
      return button!.x + button!.width - (card!.x + card!.width);
    };
    await expect.poll(overhang).toBeLessThanOrEqual(0);

    const secret = sshKeygen(['-t', 'ed25519']).private;
    await keys.getByLabel('Name').fill('oops');
    await keys.getByLabel('Public key (the line of the .pub file)').fill(secret);
    await keys.getByRole('button', { name: 'Add server key' }).click();
    await expect.poll(() => keys.locator('#server-key-public-error').textContent()).toBe('This is a private key: paste the public key (.pub).');
    // The box is emptied, so the private key is not left on the page.
    expect(await keys.getByLabel('Public key (the line of the .pub file)').inputValue()).toBe('');
    expect(await keys.locator('tbody tr').count()).toBe(1);

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await row.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => keys.locator('tr[data-key="Alice laptop"]').count()).toBe(0);
    expect(asked).toContain('“Alice laptop”');
    expect(asked).toContain(made.listed.fingerprint);
    expect((await dash.server.client.get('/api/server-keys')).body).toEqual([]);
    expect(dash.errors).toEqual([]);
  });

  it('an operator creates a cloud config, is told what is wrong with a bad body, and edits it', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', '/settings');
    const configs = page.getByTestId('cloud-configs');
    await configs.getByText('No cloud config yet.').waitFor();
    const create = configs.getByTestId('cloud-config-new');
    await create.getByLabel('Name').fill('Base');
    await create.getByLabel('Description').fill('guest agent');
    await create.getByLabel('cloud-init user-data').fill('#cloud-config\nusers:\n  - name: a\n    ssh_authorized_keys: [x]\n');
    await create.getByRole('button', { name: 'Add cloud config' }).click();
    await expect.poll(() => create.locator('.field-error').textContent()).toContain('must not hold ssh_authorized_keys');

    await create.getByLabel('cloud-init user-data').fill('#cloud-config\npackages: [qemu-guest-agent]\n');
    await create.getByRole('button', { name: 'Add cloud config' }).click();
    const row = configs.locator('tr[data-config="Base"]');
    await expect.poll(() => row.count()).toBe(1);

    await row.getByRole('button', { name: 'Edit' }).click();
    const [{ id }] = (await dash.server.client.get('/api/cloud-configs')).body;
    const edit = configs.getByTestId(`cloud-config-${id}`);
    await expect.poll(() => edit.getByLabel('cloud-init user-data').inputValue()).toBe('#cloud-config\npackages: [qemu-guest-agent]\n');
    await edit.getByLabel('Name').fill('Base v2');
    await edit.getByLabel('cloud-init user-data').fill('#cloud-config\npackages: [qemu-guest-agent, curl]\n');
    await edit.getByRole('button', { name: 'Save cloud config' }).click();
    await expect.poll(() => configs.locator('tr[data-config="Base v2"]').count()).toBe(1);
    await expect.poll(() => configs.getByRole('status').textContent()).toBe('Cloud config “Base v2” saved.');
    expect((await dash.server.client.get(`/api/cloud-configs/${id}`)).body).toMatchObject({ name: 'Base v2', description: 'guest agent', body: '#cloud-config\npackages: [qemu-guest-agent, curl]\n' });
    expect(dash.errors).toEqual([]);
  });
});
