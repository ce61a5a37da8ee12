import type { DriftItem, Guest } from './schema.js';

/**
 * A host's guests against the registry, matched by vmid (PRODUCT.md): a guest with no instance,
 * an instance whose name differs from its guest's, and registered instances that no guest of any
 * live host has (`orphans`, found by the caller in one query).
 */
export function computeDrift(
  guests: readonly Guest[],
  instanceNames: ReadonlyMap<number, string>,
  orphans: readonly { vmid: number; name: string }[],
): DriftItem[] {
  const items: DriftItem[] = [];
  for (const guest of guests) {
    const name = instanceNames.get(guest.vmid);
    if (name === undefined) items.push({ kind: 'guest_without_instance', vmid: guest.vmid, guest_name: guest.name, guest_type: guest.type });
    else if (name !== guest.name) items.push({ kind: 'name_differs', vmid: guest.vmid, guest_name: guest.name, instance_name: name });
  }
  for (const orphan of orphans) items.push({ kind: 'instance_without_guest', vmid: orphan.vmid, instance_name: orphan.name });
  return items;
}

/** Only these kinds are applied (create, rename); removing an instance stays a person's decision. */
export const APPLICABLE: ReadonlySet<DriftItem['kind']> = new Set(['guest_without_instance', 'name_differs']);
