import { describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { createSealer } from './sealed.js';

describe('sealed step cookies', () => {
  it('open only what this key sealed, under the same kind, before it expires', () => {
    const clock = manualClock(Date.parse('2026-11-22T10:00:00.000Z'));
    const sealer = createSealer(clock);
    const sealed = sealer.seal('oidc', { state: 's', next: '/jobs' }, 60_000);
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(sealer.open('oidc', sealed)).toEqual({ state: 's', next: '/jobs' });

    // Another kind, another key, a changed body or MAC, or nothing: refused.
    expect(sealer.open('passkey', sealed)).toBeUndefined();
    expect(createSealer(clock).open('oidc', sealed)).toBeUndefined();
    const [body, mac] = sealed.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ e: clock.now() + 60_000, v: { state: 's', next: '//evil.example' } })).toString('base64url');
    for (const bad of [`${forged}.${mac}`, `${body}.${mac.slice(0, -2)}AA`, `${body}.`, `.${mac}`, body, '', undefined]) {
      expect(sealer.open('oidc', bad)).toBeUndefined();
    }

    // The expiry is signed with the value: a cookie kept past it is refused whatever its Max-Age said.
    clock.advance(60_000);
    expect(sealer.open('oidc', sealed)).toBeUndefined();
  });
});
