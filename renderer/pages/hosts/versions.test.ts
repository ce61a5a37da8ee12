import { describe, expect, it } from 'vitest';
import { compareVersions as serverCompare } from '../../../server/hosts/releases';
import { compareVersions, rollbackTargets } from './versions';

const PAIRS: [string, string][] = [
  ['1.10.0', '1.9.9'],
  ['1.0.0', '1.0.1'],
  ['1.0.0-rc.1', '1.0.0'],
  ['1.0.0-rc.2', '1.0.0-rc.1'],
  ['1.0.0+build.5', '1.0.0'],
  ['2.0.0', '2.0.0'],
  ['0.9.0', '1.0.0'],
];

describe('compareVersions', () => {
  it('orders versions as the server does, so the page offers what the server takes as a rollback', () => {
    for (const [a, b] of PAIRS) {
      expect(Math.sign(compareVersions(a, b)), `${a} vs ${b}`).toBe(Math.sign(serverCompare(a, b)));
      expect(Math.sign(compareVersions(b, a)), `${b} vs ${a}`).toBe(Math.sign(serverCompare(b, a)));
    }
  });
});

describe('rollbackTargets', () => {
  it('lists only shipped versions older than the running one, newest first', () => {
    expect(rollbackTargets(['1.2.0', '0.9.0', '1.1.0', '1.3.0', '1.2.0-rc.1'], '1.2.0')).toEqual(['1.2.0-rc.1', '1.1.0', '0.9.0']);
  });
  it('offers nothing when only one version ships, or none is older', () => {
    expect(rollbackTargets(['1.0.0'], '1.0.0')).toEqual([]);
    expect(rollbackTargets(['1.1.0', '1.0.0'], '1.0.0')).toEqual([]);
    expect(rollbackTargets([], '1.0.0')).toEqual([]);
  });
});
