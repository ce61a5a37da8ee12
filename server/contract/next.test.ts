import { describe, expect, it } from 'vitest';
import { sameOriginPath } from './next';

// Issue 34: the check read the raw text and returned the path after dot segments were resolved, so
// `/.//evil.example` came back as `//evil.example`, which a browser follows to another host.
const HOSTILE = [
  '/.//evil.example',
  '/..//evil.example/x',
  '/%2e%2e//evil.example',
  '/%2E//evil.example',
  '/a/..//evil.example',
  '/./\\evil.example',
  '/\\evil.example',
  '/\\/evil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r\n/evil.example',
  '//evil.example/',
  '///evil.example',
  'https://evil.example/',
  'javascript:alert(1)',
  '\t//evil.example',
  ' /x',
  '',
  'x'.repeat(2001),
];

describe('sameOriginPath', () => {
  it.each(HOSTILE)('refuses %j', (raw) => {
    expect(sameOriginPath(raw)).toBeUndefined();
  });

  it('returns exactly the normalised path it checked, which stays on the origin when followed', () => {
    expect(sameOriginPath('/instances?state=testing#x')).toBe('/instances?state=testing#x');
    expect(sameOriginPath('/jobs/./x/../y?a=1')).toBe('/jobs/y?a=1');
    expect(sameOriginPath('/%2e%2e/jobs')).toBe('/jobs');
    expect(sameOriginPath('/a b')).toBe('/a%20b');
    expect(sameOriginPath(undefined)).toBeUndefined();
    expect(sameOriginPath(42)).toBeUndefined();
    for (const raw of [...HOSTILE, '/instances', '/a/../b', '/%0a', '/x\ny']) {
      const kept = sameOriginPath(raw);
      if (kept === undefined) continue;
      expect(kept.startsWith('/') && !kept.startsWith('//'), raw).toBe(true);
      expect(new URL(kept, 'http://here.example').origin, raw).toBe('http://here.example');
    }
  });
});
