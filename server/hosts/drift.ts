import type { GuestFact, HostRepo, HostRow, InstanceRef, InstancesOf } from './repo.js';
import type { DriftItem, Guest, HostRef } from '../contract/hosts.js';

/**
 * A host's guests against the registry, matched by vmid (PRODUCT.md): a guest with no instance, and
 * an instance whose name differs from its guest's. A vmid that another online host reports too
 * (`shared`) is a conflict and nothing else: which host is right is a person's call. Instances that
 * no host reports concern no one host: the instances list shows them (`GET /api/instances?host_id=none`).
 * "A template is never drift (never proposed or applied as a new instance)."
 */
export function computeDrift(guests: readonly Guest[], instances: ReadonlyMap<number, InstanceRef>, shared: ReadonlyMap<number, HostRef[]> = new Map()): DriftItem[] {
  const items: DriftItem[] = [];
  for (const guest of guests) {
    if (guest.template) continue;
    const instance = instances.get(guest.vmid);
    const others = shared.get(guest.vmid);
    if (others?.length) {
      items.push({ kind: 'conflict', vmid: guest.vmid, guest_name: guest.name, instance_name: instance?.name ?? null, other_hosts: others });
    } else if (instance === undefined) {
      items.push({ kind: 'guest_without_instance', vmid: guest.vmid, guest_name: guest.name, guest_type: guest.type });
    } else if (instance.name !== guest.name) {
      items.push({ kind: 'name_differs', vmid: guest.vmid, guest_name: guest.name, instance_name: instance.name, instance_stack: instance.stack });
    }
  }
  return items;
}

/**
 * Why an item is not applied, or undefined when it is. `named`: an operator applied this very item,
 * not "apply all" and not sync_registry. Only creating and renaming are ever applied; removing an
 * instance stays a person's decision.
 */
export function refusalOf(item: DriftItem, named: boolean): string | undefined {
  switch (item.kind) {
    case 'conflict':
      return `also reported by ${item.other_hosts.map((h) => `${h.hostname} (host ${h.id})`).join(', ')}: not applied until only one host reports it`;
    case 'name_differs':
      // A host must not rename production through a bulk action or its own heartbeats.
      return item.instance_stack === 'production' && !named ? 'a production instance is renamed only by applying its own item' : undefined;
    case 'guest_without_instance':
      return undefined;
  }
}

/**
 * The host's drift against the registry. `freshSince`: the oldest heartbeat time (ms) of an online
 * host. "vmids are unique per cluster, not per host: a vmid last reported by a host that is offline
 * or deleted does not conflict with the same vmid on an online host": only two online hosts conflict.
 */
export function hostDrift(repo: HostRepo, host: HostRow, guests: readonly Guest[], freshSince: number, instancesOf: InstancesOf): DriftItem[] {
  if (host.state === 'deleted') return [];
  const instances = new Map(instancesOf(guests.map((g) => g.vmid)).map((i) => [i.vmid, i]));
  const shared = new Map<number, HostRef[]>();
  const online = host.last_heartbeat_at !== null && host.last_heartbeat_at >= freshSince;
  for (const { vmid, id, hostname } of online ? repo.sharedVmids(host.id, freshSince) : []) {
    const list = shared.get(vmid) ?? [];
    list.push({ id, hostname });
    shared.set(vmid, list);
  }
  return computeDrift(guests, instances, shared);
}

/**
 * Guests and drift per host, as computeDrift counts them (the host list), for every host at once:
 * one read of the registry for all the vmids the hosts report.
 */
export function driftCounts(guests: readonly GuestFact[], instancesOf: InstancesOf): Map<number, { guests: number; drift: number }> {
  const names = new Map(instancesOf([...new Set(guests.map((g) => g.vmid))]).map((i) => [i.vmid, i.name]));
  const counts = new Map<number, { guests: number; drift: number }>();
  for (const g of guests) {
    const count = counts.get(g.host_id) ?? { guests: 0, drift: 0 };
    count.guests++;
    if (!g.template && (g.shared || names.get(g.vmid) !== g.name)) count.drift++;
    counts.set(g.host_id, count);
  }
  return counts;
}
