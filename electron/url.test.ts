import { describe, expect, it } from 'vitest';
import { isInternalUrl } from './url.js';

const PORT = 41234;
const ORIGIN = `http://127.0.0.1:${PORT}`;

describe('isInternalUrl', () => {
  it.each([
    `${ORIGIN}/`,
    `${ORIGIN}`,
    `${ORIGIN}/instances?search=web&sort=name`,
    `${ORIGIN}/setup?token=abc`,
    `${ORIGIN}/#/jobs`,
    `HTTP://127.0.0.1:${PORT}/login`,
    `${ORIGIN}/?next=https://evil.example/`,
  ])('accepts the server\'s own origin: %s', (url) => {
    expect(isInternalUrl(url, ORIGIN)).toBe(true);
  });

  it('accepts spellings the URL parser turns into the very same origin (same host, same port)', () => {
    // These reach the same socket; they are not another site.
    for (const url of [`http://127.0.0.1.:${PORT}/`, `http://127.0.0.%31:${PORT}/`, `http://127.1:${PORT}/`, `http:\\\\127.0.0.1:${PORT}\\x`]) {
      expect(isInternalUrl(url, ORIGIN), url).toBe(true);
    }
  });

  it.each([
    // look-alike hosts
    `http://localhost.evil.example:${PORT}/`,
    `http://127.0.0.1.evil.example:${PORT}/`,
    `http://127.0.0.1.evil.example.:${PORT}/`,
    `http://127.0.0.1:${PORT}.evil.example/`,
    // userinfo tricks
    `http://127.0.0.1:${PORT}@evil.example/`,
    `http://127.0.0.1@evil.example:${PORT}/`,
    `http://user:secret@127.0.0.1:${PORT}/`,
    `http://admin@127.0.0.1:${PORT}/`,
    `http://127.0.0.1:${PORT}%2f@evil.example/`,
    // other ports, schemes and spellings of loopback
    `http://127.0.0.1:${PORT + 1}/`,
    `http://127.0.0.1/`,
    `https://127.0.0.1:${PORT}/`,
    `ws://127.0.0.1:${PORT}/`,
    `http://localhost:${PORT}/`,
    `http://[::1]:${PORT}/`,
    `http://[::ffff:127.0.0.1]:${PORT}/`,
    `http://127.0.0.2:${PORT}/`,
    // script, data, file and wrapper schemes
    'javascript:alert(document.cookie)',
    `javascript://127.0.0.1:${PORT}/%0aalert(1)`,
    'data:text/html,<script>alert(1)</script>',
    'file:///etc/passwd',
    `blob:http://127.0.0.1:${PORT}/6f1e6b4a-0000-4000-8000-000000000000`,
    `view-source:http://127.0.0.1:${PORT}/`,
    // our origin only as a parameter
    `https://evil.example/?next=http://127.0.0.1:${PORT}/`,
    `https://evil.example/#http://127.0.0.1:${PORT}`,
    // backslashes
    `http://evil.example\\@127.0.0.1:${PORT}/`,
    `http:/\\evil.example\\@127.0.0.1:${PORT}/`,
    // percent-encoding
    `http://127.0.0.1%2eevil.example:${PORT}/`,
    `http://127.0.0.1%40evil.example:${PORT}/`,
    // not URLs at all
    '',
    'not a url',
    '/relative/path',
    `//127.0.0.1:${PORT}/`,
  ])('rejects %s', (url) => {
    expect(isInternalUrl(url, ORIGIN)).toBe(false);
  });

  it('rejects everything when the server origin itself is not an http(s) URL', () => {
    expect(isInternalUrl('file:///x', 'file:///x')).toBe(false);
    expect(isInternalUrl(`${ORIGIN}/`, 'garbage')).toBe(false);
  });
});
