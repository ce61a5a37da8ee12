import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { ADMIN_PASSWORD, logIn, startServer, USER_PASSWORD, type TestServer } from '../../test/helpers/server.js';
import { burnPasswordCheck, DEFAULT_PASSWORD_COST, hashPassword, scryptRuns } from './passwords.js';

const servers: TestServer[] = [];
// Throttle windows are fixed on the clock: a still one keeps each burst inside a single window.
async function start(options: Parameters<typeof startServer>[0] = {}) {
  // The product's scrypt cost: these races happen while a request hashes.
  const server = await startServer({ clock: manualClock(), passwordCost: DEFAULT_PASSWORD_COST, ...options });
  servers.push(server);
  return server;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {});

/** Keeps the scrypt queue busy (a few rounds on any core count), so a request that hashes waits long enough for another to overtake it. */
const busyHashing = (n = Math.max(8, availableParallelism() * 4)) => Promise.all(Array.from({ length: n }, (_, i) => hashPassword(`queue-filler-${i}`)));

describe('throttles take their slot before any password is hashed', () => {
  it('30 parallel wrong logins from one address: exactly 10 are hashed (401), the other 20 are 429', async () => {
    const server = await start();
    await burnPasswordCheck('warm up the unknown-user hash');
    const before = scryptRuns();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => server.anonymous().post('/api/auth/login', { username: `nobody${i}`, password: 'wrong-password' })),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 401: 10, 429: 20 });
    expect(scryptRuns() - before).toBe(10);
    expect(answers.find((a) => a.status === 429)!.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('40 parallel logins for one username, the right password last: 5 hashed, no 200 beyond the limit', async () => {
    const server = await start();
    const before = scryptRuns();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        server.anonymous().post('/api/auth/login', { username: 'admin', password: i === 39 ? ADMIN_PASSWORD : `wrong-${i}` }),
      ),
    );
    const statuses = tally(answers.map((a) => a.status));
    expect(statuses[429]).toBe(35);
    expect((statuses[401] ?? 0) + (statuses[200] ?? 0)).toBe(5);
    expect(scryptRuns() - before).toBe(5);
    // The window is full of failures: the right password is refused too until it ends.
    expect((await server.anonymous().post('/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD })).status).toBe(429);
  });

  it('a successful login gives its slot back', async () => {
    const server = await start();
    for (let i = 0; i < 4; i++) await server.anonymous().post('/api/auth/login', { username: 'admin', password: 'wrong-password' });
    for (let i = 0; i < 3; i++) await logIn(server.anonymous(), 'admin', ADMIN_PASSWORD);
    expect((await server.anonymous().post('/api/auth/login', { username: 'admin', password: 'wrong-password' })).status).toBe(401);
    expect((await server.anonymous().post('/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD })).status).toBe(429);
  });

  it('25 parallel setups with a wrong token: 10 are 403, 15 are 429', async () => {
    const server = await start({ config: { setupToken: 'the-right-setup-token-0123456789' }, signedIn: false });
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        server.anonymous().post('/setup', { setup_token: `wrong-${i}`, username: 'first', display_name: 'First', password: 'first-password' }),
      ),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 403: 10, 429: 15 });
  });

  it('12 parallel password changes with a wrong current password: exactly 5 hashed (401), 7 are 429', async () => {
    const server = await start();
    const user = await server.signIn('viewer');
    const before = scryptRuns();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => user.post('/api/auth/password', { current_password: `wrong-${i}`, new_password: 'a-new-password-1' })),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 401: 5, 429: 7 });
    expect(scryptRuns() - before).toBe(5);
  });
});

describe('a password change in flight does not undo an administrator', () => {
  it('sessions revoked while the change hashes: the change is refused with 401 and nothing is written', async () => {
    const server = await start();
    const user = await server.signIn('operator', 'pat');
    const { id } = (await user.get('/api/auth/session')).body.user;
    const busy = busyHashing();
    const change = user.post('/api/auth/password', { current_password: USER_PASSWORD, new_password: 'pats-new-password' });
    const revoke = await server.client.post(`/api/users/${id}/revoke-sessions`);
    expect(revoke.status).toBe(204);
    const changed = await change;
    await busy;
    expect([changed.status, changed.body]).toEqual([401, { error: 'authentication required' }]);
    expect(changed.headers.getSetCookie()).toEqual([]);
    expect((await user.get('/api/auth/session')).status).toBe(401);
    await expect(logIn(server.anonymous(), 'pat', 'pats-new-password')).rejects.toThrow('401');
    await logIn(server.anonymous(), 'pat', USER_PASSWORD);
  });

  it('password reset while the change hashes: the temporary password stands and must still be changed', async () => {
    const server = await start();
    const user = await server.signIn('operator', 'sam');
    const { id } = (await user.get('/api/auth/session')).body.user;
    const busy = busyHashing();
    const reset = server.client.post(`/api/users/${id}/reset-password`);
    const change = user.post('/api/auth/password', { current_password: USER_PASSWORD, new_password: 'sams-new-password' });
    const [resetAnswer, changed] = await Promise.all([reset, change]);
    await busy;
    expect(resetAnswer.status).toBe(200);
    expect(changed.status).toBe(401);
    await expect(logIn(server.anonymous(), 'sam', 'sams-new-password')).rejects.toThrow('401');
    const temp = await logIn(server.anonymous(), 'sam', resetAnswer.body.temporary_password);
    expect((await temp.get('/api/auth/session')).body.user.must_change_password).toBe(true);
  });

  it('the stored hash changed while the change hashed (same session): 409, the other password stands', async () => {
    const server = await start();
    const user = await server.signIn('viewer', 'kim');
    const { user: account } = (await user.get('/api/auth/session')).body;
    const session = server.db.prepare<[number], { id: number }>('SELECT id FROM sessions WHERE account_id = ?').get(account.id)!;
    const busy = busyHashing();
    const change = server.accounts.changePassword(account.id, session.id, USER_PASSWORD, 'kims-new-password');
    server.accounts.repo.setPassword(account.id, await hashPassword('set-meanwhile-password'), false, '2026-01-01T00:00:00Z');
    await expect(change).rejects.toMatchObject({ status: 409, body: { error: 'password was changed meanwhile; sign in again' } });
    await busy;
    await logIn(server.anonymous(), 'kim', 'set-meanwhile-password');
  });
});

describe('the new password', () => {
  it('must differ from the current one: 400 with a field error, nothing hashed, the temporary password still required', async () => {
    const server = await start();
    const created = await server.client.post('/api/users', { username: 'newbie', display_name: 'New', role: 'operator' });
    const temporary = created.body.temporary_password as string;
    const newbie = await logIn(server.anonymous(), 'newbie', temporary);
    const before = scryptRuns();
    const res = await newbie.post('/api/auth/password', { current_password: temporary, new_password: temporary });
    expect([res.status, res.body]).toEqual([400, { errors: [{ field: 'new_password', message: 'must differ from the current password' }] }]);
    expect(scryptRuns()).toBe(before);
    expect((await newbie.get('/api/auth/session')).body.user.must_change_password).toBe(true);
    expect((await newbie.post('/api/auth/password', { current_password: temporary, new_password: 'chosen-by-newbie' })).status).toBe(204);
  });
});
