import type { CampaignPlan, PlannedTarget, SkippedTarget } from '../contract/campaigns.js';
import { MAX_CAMPAIGN_TARGETS, type CampaignRequest, type CampaignStep, type CampaignTargetSpec } from '../contract/inputs/campaigns.js';
import { badRequest, conflict, validationFailed, type FieldError } from '../errors.js';
import type { CampaignParts } from './parts.js';

/**
 * Whether the step runs on hosts themselves (an agent upgrade; a script given `{host_ids}`) or in
 * guests. `{host_ids}` with a guest action means every guest those hosts listed in their last heartbeat.
 */
export const runsOnHosts = (step: CampaignStep, target: CampaignTargetSpec): boolean =>
  step.type === 'agent.upgrade' || (step.type === 'script' && target.host_ids !== undefined);

/** The step as the campaign keeps it: an upgrade names the version it goes to, decided once, now. */
export function resolveStep(parts: Pick<CampaignParts, 'launch'>, step: CampaignStep): CampaignStep {
  if (step.type !== 'agent.upgrade') return step;
  const version = step.version ?? parts.launch.agentVersion();
  if (!version) throw conflict('no agent release is available');
  if (!parts.launch.agentVersions().includes(version)) throw validationFailed([{ field: 'step.version', message: `${version} is not an agent version this server ships` }]);
  return { ...step, version };
}

/**
 * The targets frozen at creation, in order, each runnable or skipped with the reason; then the
 * runnable ones cut into waves of `wave_size`. Read inside the creating transaction, so a target
 * that another campaign holds ("no target run twice") is seen even when both are made at once.
 */
export function planCampaign(parts: CampaignParts, request: CampaignRequest, step: CampaignStep, now: number): CampaignPlan {
  const { target } = request;
  if (step.type === 'agent.upgrade' && target.host_ids === undefined) throw validationFailed([{ field: 'target', message: 'an agent.upgrade step takes {host_ids}' }]);
  const planned = runsOnHosts(step, target) ? hostTargets(parts, target.host_ids!, step, now) : guestTargets(parts, target, now);
  if (planned.length > MAX_CAMPAIGN_TARGETS) throw badRequest(`the target names ${planned.length} guests; a campaign takes at most ${MAX_CAMPAIGN_TARGETS}`);
  const runnable = planned.filter((t): t is PlannedTarget & { reason: undefined } => t.reason === undefined).map(({ host_id, vmid, name }) => ({ host_id, vmid, name }));
  const waves: PlannedTarget[][] = [];
  for (let i = 0; i < runnable.length; i += request.wave_size) waves.push(runnable.slice(i, i + request.wave_size));
  return { waves, skipped: planned.filter((t): t is SkippedTarget => t.reason !== undefined) };
}

type Planned = PlannedTarget & { reason?: string | undefined };

function hostTargets(parts: CampaignParts, hostIds: number[], step: CampaignStep, now: number): Planned[] {
  const errors: FieldError[] = [];
  const planned: Planned[] = [];
  hostIds.forEach((id, i) => {
    const host = parts.fleet.host(id, now);
    if (!host) return void errors.push({ field: `target.host_ids.${i}`, message: `host ${id} not found` });
    const skip = (reason: string) => planned.push({ host_id: id, vmid: null, name: host.hostname, reason });
    if (host.state === 'deleted') return void skip('host is deleted');
    if (host.state === 'deleting') return void skip('host is being deleted');
    if (step.type === 'agent.upgrade' && host.agent_version === step.version) return void skip(`already runs ${step.version}`);
    const holder = parts.repo.holder(id, null);
    if (holder) return void skip(`already in campaign ${holder.id} “${holder.name}”`);
    planned.push({ host_id: id, vmid: null, name: host.hostname });
  });
  if (errors.length) throw validationFailed(errors);
  return planned;
}

function guestTargets(parts: CampaignParts, target: CampaignTargetSpec, now: number): Planned[] {
  const { fleet, repo } = parts;
  const planned: Planned[] = [];
  const guest = (hostId: number, vmid: number): void => {
    const host = fleet.host(hostId, now);
    const found = fleet.guest(hostId, vmid);
    const name = found?.name ?? '';
    const skip = (reason: string) => void planned.push({ host_id: hostId, vmid, name, reason });
    if (!host || host.state === 'deleted') return skip('host is deleted');
    if (host.state === 'deleting') return skip('host is being deleted');
    if (found?.template) return skip('guest is a template');
    const holder = repo.holder(hostId, vmid);
    if (holder) return skip(`already in campaign ${holder.id} “${holder.name}”`);
    planned.push({ host_id: hostId, vmid, name });
  };

  if (target.host_ids !== undefined) {
    const errors: FieldError[] = [];
    target.host_ids.forEach((id, i) => {
      const host = fleet.host(id, now);
      if (!host) return void errors.push({ field: `target.host_ids.${i}`, message: `host ${id} not found` });
      if (host.state === 'deleted') return void planned.push({ host_id: id, vmid: null, name: host.hostname, reason: 'host is deleted' });
      for (const g of fleet.guestsOf(id)) guest(id, g.vmid);
    });
    if (errors.length) throw validationFailed(errors);
    return planned;
  }
  const vmids = target.vmids ?? parts.collections.vmidsOf(target.collection_id!);
  for (const vmid of vmids) {
    const hostId = fleet.hostOf(vmid);
    if (hostId === undefined) planned.push({ host_id: null, vmid, name: '', reason: 'no host reports this guest' });
    else guest(hostId, vmid);
  }
  return planned;
}
