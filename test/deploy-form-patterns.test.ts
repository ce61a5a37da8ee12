// The Deploy dialog checks its fields with copies of the launch patterns (the bundle may not take the
// zod module they live in by value): the copies are the contract's, pattern for pattern.
import { describe, expect, it } from 'vitest';
import * as contract from '../server/contract/inputs/provisioning.js';
import * as dialog from '../renderer/pages/hosts/deployForm.js';

describe('the Deploy dialog’s patterns', () => {
  it.each(['DNS_LABEL', 'BRIDGE', 'CI_USER', 'STORAGE_ID', 'TEMPLATE_VOLUME', 'IPV4_ADDRESS', 'IPV4_CIDR'] as const)('%s is the contract’s', (name) => {
    expect(dialog[name].source).toBe(contract[name].source);
    expect(dialog[name].flags).toBe(contract[name].flags);
  });
});
