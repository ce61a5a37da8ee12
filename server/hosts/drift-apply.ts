import { conflict, HttpError } from '../errors.js';
import type { InstanceService } from '../registry/service.js';
import { hostDrift, refusalOf } from './drift.js';
import { nameOf } from '../audit.js';
import { actingAs, type Actor } from '../http/request-context.js';
import { hostSubject, requireHost, type HostParts, type Who } from './parts.js';
import type { HostRepo, HostRow } from './repo.js';
import type { DriftItem } from '../contract/hosts.js';
import type { DriftApply } from '../contract/inputs/hosts.js';

import type { DriftResult } from '../contract/hosts.js';
export type { DriftResult };

/**
 * Applies a host's drift through the registry's update path (history says `agent:<hostname>`).
 * `{all: true}` (and sync_registry, which passes it) takes every item it may; `{items}` names vmids.
 */
export function applyHostDrift(repo: HostRepo, instances: InstanceService, host: HostRow, request: DriftApply, freshSince: number): DriftResult {
  // "recorded in history as `agent:<hostname>`", whoever applies it; a person's request keeps its id.
  const actor: Actor = { type: 'agent', id: host.id, name: host.hostname };
  const items = hostDrift(repo, host, repo.guestsOf(host.id), freshSince, instances.byVmids);
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
        actingAs(actor, () => instances.create({ vmid, name, state: 'deployed', stack: 'development' }));
      } else if (item.kind === 'name_differs') {
        actingAs(actor, () => instances.update(vmid, { name: item.guest_name }));
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

/**
 * Drift applied by an operator (`who`, audited) or by the host's own heartbeats (sync_registry, no
 * person to name). One transaction: an item the registry refuses rolls back alone (a savepoint) and
 * is reported skipped; the audit entry commits with the instances it names.
 */
export function createDriftApply({ ctx, repo, audit, view }: HostParts, instances: InstanceService) {
  return ctx.transaction((hostId: number, request: DriftApply, who: Who | null): DriftResult => {
    const host = requireHost(repo, hostId);
    if (host.state === 'deleted') throw conflict('host is deleted');
    const result = applyHostDrift(repo, instances, host, request, view.freshSince());
    if (who && result.applied.length) {
      audit.write({ action: 'host.drift_apply', subject: hostSubject(host), summary: `${nameOf()} applied registry drift from host ${host.hostname}`, detail: { applied: result.applied.map((i) => i.vmid), actor: `agent:${host.hostname}` } });
    }
    return result;
  });
}
