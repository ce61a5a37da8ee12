import { describe, expect, it } from 'vitest';
import { channelVersions, rollbackTargets } from './versions';

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

describe('channelVersions', () => {
  it('gives a stable host the stable versions and a beta host every one, newest first', () => {
    const shipped = ['1.1.0', '1.2.0-beta.1', '1.0.0', '1.1.0'];
    expect(channelVersions(shipped, 'stable')).toEqual(['1.1.0', '1.0.0']);
    expect(channelVersions(shipped, 'beta')).toEqual(['1.2.0-beta.1', '1.1.0', '1.0.0']);
  });
});
