import type { InstanceInput } from '../../server/contract/inputs/registry.js';

let nextVmid = 1000;

/** A valid instance body; pass only what the test is about. */
export function buildInstance(overrides: Partial<Record<keyof InstanceInput, unknown>> & Record<string, unknown> = {}): Record<string, unknown> {
  const vmid = nextVmid++;
  return { vmid, name: `vm-${vmid}`, state: 'deployed', stack: 'development', ...overrides };
}
