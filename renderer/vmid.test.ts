import { describe, expect, it } from 'vitest';
import { isProxmoxVmid } from './vmid';

describe('isProxmoxVmid', () => {
  it('is 100 to 999,999,999, whole numbers only', () => {
    expect([99, 100, 999_999_999, 1_000_000_000, 100.5, 0].map(isProxmoxVmid)).toEqual([false, true, true, false, false, false]);
  });
});
