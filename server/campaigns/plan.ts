import type { CampaignPlan, PlannedTarget, SkippedTarget } from '../contract/campaigns.js';
import { MAX_CAMPAIGN_TARGETS, type CampaignRequest, type CampaignStep, type CampaignTargetSpec } from '../contract/inputs/campaigns.js';
import { badRequest, conflict, validationFailed, type FieldError } from '../errors.js';
import { channelOf, compareVersions, type AgentChannel } from '../contract/versions.js';
import type { CampaignParts, FleetHost } from './parts.js';

/**
 * Whether the step runs on hosts themselves (an agent upgrade; a script that runs on the host) or in
 * guests. `{host_ids}` with a guest action or a guest script means every guest those hosts listed in
 * their last heartbeat.
 */
const runsOnHosts = (parts: Pick<CampaignParts, 'launch'>, step: CampaignStep): boolean =>
  step.type === 'agent.upgrade' || (step.type === 'script' && parts.launch.scriptRunsOn(step.script_id) === 'host');

/**
 * The step as the campaign keeps it, checked against what exists now: an upgrade's version is one
 * this server ships (absent: each host's newest on its channel, decided as its wave starts), a
 * script exists.
 */
export function resolveStep(parts: Pick<CampaignParts, 'launch'>, step: CampaignStep): CampaignStep {
  if (step.type === 'script' && parts.launch.scriptRunsOn(step.script_id) === undefined) {
    throw validationFailed([{ field: 'step.script_id', message: `script ${step.script_id} not found` }]);
  }
  if (step.type !== 'agent.upgrade') return step;
  if (parts.launch.agentVersions().length === 0) throw conflict('no agent release is available');
  if (step.version !== undefined && !parts.launch.agentVersions().includes(step.version)) {
    throw validationFailed([{ field: 'step.version', message: `${step.version} is not an agent version this server ships` }]);
  }
  return step;
}

/**
 * The version an agent upgrade moves this host to, or why the host is left alone: the version asked
 * for, else the newest of the host's channel (PRODUCT.md: "Offered and automatic upgrades follow the
 * host's channel and never move a pinned host"). A pinned host is skipped, naming its pin; a `stable`
 * host is never given a pre-release, and no host is moved back.
 */
export function upgradeFor(host: FleetHost, asked: string | undefined, newest: (channel: AgentChannel) => string | undefined): { version: string } | { reason: string } {
  if (host.agent_pin !== null) return { reason: `pinned to agent ${host.agent_pin}` };
  const version = asked ?? newest(host.agent_channel);
  if (version === undefined) return { reason: `no agent release on the ${host.agent_channel} channel` };
  if (host.agent_channel === 'stable' && channelOf(version) === 'beta') return { reason: `follows the stable channel; ${version} is a beta version` };
  if (host.agent_version === version) return { reason: `already runs ${version}` };
  if (compareVersions(version, host.agent_version) < 0) return { reason: `runs ${host.agent_version}, newer than ${version}` };
  return { version };
}

/**
 * The targets frozen at creation, in order, each runnable or skipped with the reason; then the
 * runnable ones cut into waves of `wave_size`. Read inside the creating transaction, so a target
 * that another campaign holds ("no target run twice") is seen even when both are made at once.
 */
export function planCampaign(parts: CampaignParts, request: CampaignRequest, step: CampaignStep, now: number): CampaignPlan {
  const { target } = request;
  const onHosts = runsOnHosts(parts, step);
  if (onHosts && target.host_ids === undefined) {
    throw validationFailed([{ field: 'target', message: step.type === 'agent.upgrade' ? 'an agent.upgrade step takes {host_ids}' : 'a script that runs on the host takes {host_ids}' }]);
  }
  const planned = onHosts ? hostTargets(parts, target.host_ids!, step, now) : guestTargets(parts, target, now);
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
    if (step.type === 'agent.upgrade') {
      const upgrade = upgradeFor(host, step.version, parts.launch.newestAgent);
      if ('reason' in upgrade) return void skip(upgrade.reason);
    }
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
  const placed = vmids.map((vmid) => ({ vmid, hostId: fleet.hostOf(vmid) }));
  // A guest no host reports is named as the registry names it.
  const unreported = placed.filter((p) => p.hostId === undefined).map((p) => p.vmid);
  const names = unreported.length ? fleet.registryNames(unreported) : new Map<number, string>();
  for (const { vmid, hostId } of placed) {
    if (hostId === undefined) planned.push({ host_id: null, vmid, name: names.get(vmid) ?? '', reason: 'no host reports this guest' });
    else guest(hostId, vmid);
  }
  return planned;
}
