import { HttpError } from '../errors.js';
import type { InstanceService } from '../registry/service.js';
import { computeDrift, refusalOf } from './drift.js';
import type { HostRepo, HostRow } from './repo.js';
import type { DriftApply, DriftItem, Guest, HostRef } from './schema.js';

/** The host's drift; `withOrphans: false` leaves out the instances no guest has (a query over the whole registry), which are never applied. */
export function hostDrift(repo: HostRepo, host: HostRow, guests: readonly Guest[], withOrphans = true): DriftItem[] {
  if (host.state === 'deleted') return [];
  const instances = new Map(repo.instancesForGuests(host.id).map((i) => [i.vmid, i]));
  const shared = new Map<number, HostRef[]>();
  for (const { vmid, id, hostname } of repo.sharedVmids(host.id)) {
    const list = shared.get(vmid) ?? [];
    list.push({ id, hostname });
    shared.set(vmid, list);
  }
  return computeDrift(guests, instances, withOrphans ? repo.orphanInstances() : [], shared);
}

import type { DriftResult } from '../contract/hosts.js';
export type { DriftResult };

/**
 * Applies a host's drift through the registry's update path (history says `agent:<hostname>`).
 * `{all: true}` (and sync_registry, which passes it) takes every item it may; `{items}` names vmids.
 */
export function applyHostDrift(repo: HostRepo, instances: InstanceService, host: HostRow, request: DriftApply): DriftResult {
  const actor = `agent:${host.hostname}`;
  const items = hostDrift(repo, host, repo.guestsOf(host.id), false);
  const byVmid = new Map(items.map((i) => [i.vmid, i]));
  const named = !request.all;
  const wanted = named ? [...new Set((request.items ?? []).map((i) => i.vmid))] : items.map((i) => i.vmid);
  const result: DriftResult = { applied: [], skipped: [] };
  for (const vmid of wanted) {
    const item = byVmid.get(vmid);
    const refusal = item ? refusalOf(item, named) : 'no drift to apply for this vmid';
    if (!item || refusal) {
      result.skipped.push({ vmid, error: refusal! });
      continue;
    }
    try {
      if (item.kind === 'guest_without_instance') {
        const name = item.guest_name.trim() || `${item.guest_type}-${vmid}`;
        instances.create({ vmid, name, state: 'deployed', stack: 'development' }, actor);
      } else if (item.kind === 'name_differs') {
        instances.update(vmid, { name: item.guest_name }, actor);
      }
      result.applied.push(item);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      const detail = (err.body.errors as { field: string; message: string }[] | undefined)?.map((e) => `${e.field} ${e.message}`).join('; ');
      result.skipped.push({ vmid, error: detail ?? String(err.body.error ?? err.message) });
    }
  }
  return result;
}
