import { describe, expect, it } from 'vitest';
import { allowedOrigins, parseCookies } from './origin.js';

describe('allowed origins', () => {
  it('is only the configured origin when one is set', () => {
    expect(allowedOrigins({ publicOrigin: 'https://fleet.example.org', authAllowHttp: true }, 3000)).toEqual(['https://fleet.example.org']);
  });
  it('is the loopback origins of the arrival port only with FLEET_AUTH_ALLOW_HTTP', () => {
    expect(allowedOrigins({ publicOrigin: undefined, authAllowHttp: true }, 4321)).toEqual(['http://localhost:4321', 'http://127.0.0.1:4321', 'http://[::1]:4321']);
    expect(allowedOrigins({ publicOrigin: undefined, authAllowHttp: false }, 4321)).toEqual([]);
  });
});

describe('cookie header parsing', () => {
  it('keeps the first of repeated names and tolerates junk', () => {
    const cookies = parseCookies('a=1; b=x=y; junk; a=2;  c = 3 ');
    expect([...cookies]).toEqual([['a', '1'], ['b', 'x=y'], ['c', '3']]);
  });
});
