import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { parseRoleMap } from '../config.js';

// FLEET_OIDC_ONLY with a provider that cannot be reached (nothing listens on 127.0.0.1:9): what the
// sign-in page is told, and that every way in fails closed, as a redirect back and never a 500.
let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    signedIn: false,
    config: {
      oidc: { issuer: 'http://127.0.0.1:9', clientId: 'homefleet', clientSecret: 'hidden', scopes: 'openid profile', roleClaim: 'groups', roleMap: parseRoleMap('*=viewer')!, name: 'Pocket ID', only: true },
    },
  });
  await server.accounts.create({ username: 'local', display_name: 'Local', role: 'administrator', password: 'local-password' });
});
afterAll(() => server.stop());

describe('FLEET_OIDC_ONLY', () => {
  it('offers only the provider, refuses password sign-in, and sends failed starts and callbacks back to the sign-in page', async () => {
    const browser = server.anonymous();
    expect((await browser.get('/api/auth/methods')).body).toEqual({ password: false, oidc: { name: 'Pocket ID' }, passkeys: false });
    // Refused before the password is looked at: no attempt is counted.
    const login = await browser.post('/api/auth/login', { username: 'local', password: 'local-password' });
    expect([login.status, login.body]).toEqual([403, { error: 'password sign-in is turned off; sign in with Pocket ID' }]);

    const start = await fetch(`${server.baseUrl}/api/auth/oidc/start?next=/instances`, { redirect: 'manual' });
    expect([start.status, start.headers.get('location')]).toEqual([303, '/login?sso_error=provider']);
    const callback = await fetch(`${server.baseUrl}/api/auth/oidc/callback?code=abc&state=def`, { redirect: 'manual' });
    expect([callback.status, callback.headers.get('location')]).toEqual([303, '/login?sso_error=state']);
    expect(callback.headers.getSetCookie().every((c) => !c.startsWith('homefleet_session'))).toBe(true);
    const entry = server.db.prepare("SELECT summary, detail FROM audit_log WHERE action = 'login.failure' ORDER BY id DESC LIMIT 1").get() as { summary: string; detail: string };
    expect(entry.summary).toBe('single sign-on failed from 127.0.0.1: the sign-in did not start in this browser or has expired');
  });

  it('counts failed callbacks in the per-address login window, 10 a window, as for passwords', async () => {
    const codes: string[] = [];
    // The first test's failed callback already took one of this address's 10.
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${server.baseUrl}/api/auth/oidc/callback?code=abc&state=def`, { redirect: 'manual' });
      codes.push(new URL(res.headers.get('location')!, server.baseUrl).searchParams.get('sso_error')!);
    }
    expect(codes).toEqual([...Array(9).fill('state'), 'throttled']);
  });
});
