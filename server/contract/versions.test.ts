import { describe, expect, it } from 'vitest';
import { compareVersions } from './versions';

describe('compareVersions', () => {
  it.each([
    ['1.10.0', '1.9.9', 1],
    ['1.0.0', '1.0.1', -1],
    ['1.0.0-rc.1', '1.0.0', -1],
    ['1.0.0-rc.2', '1.0.0-rc.1', 1],
    ['1.0.0+build.5', '1.0.0', 0],
    ['2.0.0', '2.0.0', 0],
    ['0.9.0', '1.0.0', -1],
    // semver.org §11's own chain: 1.0.0-alpha < -alpha.1 < -alpha.beta < -beta < -beta.2 < -beta.11 < -rc.1 < 1.0.0.
    ['1.0.0-alpha', '1.0.0-alpha.1', -1],
    ['1.0.0-alpha.1', '1.0.0-alpha.beta', -1],
    ['1.0.0-alpha.beta', '1.0.0-beta', -1],
    ['1.0.0-beta', '1.0.0-beta.2', -1],
    ['1.0.0-beta.2', '1.0.0-beta.11', -1],
    ['1.0.0-beta.11', '1.0.0-rc.1', -1],
    ['1.2.0-rc.10', '1.2.0-rc.9', 1],
    ['1.2.0-rc-1', '1.2.0-rc-2', -1],
    ['1.0.0+build-5', '1.0.0', 0],
    ['1.0.0-rc.1+build.7', '1.0.0-rc.1', 0],
    ['1.2.0', '1.2.0-rc1', 1],
    ['1.0.0-0', '1.0.0-alpha', -1],
  ] as const)('%s against %s is %i, and the other way round its opposite', (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
    expect(Math.sign(compareVersions(b, a))).toBe(sign === 0 ? 0 : -sign);
  });
});
