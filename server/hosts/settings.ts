import { nameOf, type AuditChange } from '../audit.js';
import { COLLECTORS, type Collectors, type HostPatch } from '../contract/inputs/hosts.js';
import { conflict, validationFailed } from '../errors.js';
import { refusedBy, settingsErrors } from '../releases/channels.js';
import type { Releases } from '../releases/releases.js';
import { hostSubject, requireHost, type HostParts, type Who } from './parts.js';
import { collectorsOf, type HostRow } from './repo.js';

/** A host's settings as PATCH /api/hosts/:id reads and writes them. */
interface Settings {
  sync_registry: boolean;
  agent_channel: HostRow['agent_channel'];
  agent_pin: string | null;
  collectors: Collectors;
}

const settingsOf = (host: HostRow): Settings => ({
  sync_registry: host.sync_registry === 1,
  agent_channel: host.agent_channel,
  agent_pin: host.agent_pin,
  collectors: collectorsOf(host),
});

function changesBetween(before: Settings, after: Settings): AuditChange[] {
  const changes: AuditChange[] = [];
  for (const field of ['sync_registry', 'agent_channel', 'agent_pin'] as const) {
    if (before[field] !== after[field]) changes.push({ field, before: before[field], after: after[field] });
  }
  for (const c of COLLECTORS) {
    if (before.collectors[c] !== after.collectors[c]) changes.push({ field: `collectors.${c}`, before: before.collectors[c], after: after.collectors[c] });
  }
  return changes;
}

/**
 * PATCH /api/hosts/:id (`hosts.manage`): registry sync, the agent's release channel and pin, and its
 * collectors, in one transaction with its audit entry. A pending upgrade (asked for, not yet offered)
 * that the new channel or pin no longer allows is called off in the same transaction: "never move a
 * pinned host".
 */
export function createHostSettings(parts: HostParts, releases: Releases, announceOperation: (id: string) => void) {
  const { ctx, repo, audit } = parts;

  return ctx.transaction((id: number, patch: HostPatch, _who: Who) => {
    const host = requireHost(repo, id);
    if (host.state === 'deleted') throw conflict('host is deleted');
    const before = settingsOf(host);
    const after: Settings = {
      sync_registry: patch.sync_registry ?? before.sync_registry,
      agent_channel: patch.agent_channel ?? before.agent_channel,
      agent_pin: patch.agent_pin === undefined ? before.agent_pin : patch.agent_pin,
      collectors: { ...before.collectors, ...patch.collectors },
    };
    const errors = settingsErrors(after, releases.versions(), patch.agent_pin !== undefined);
    if (errors.length) throw validationFailed(errors);

    repo.setSettings(id, patch.sync_registry, undefined);
    repo.setAgentSettings(id, after.agent_channel, after.agent_pin, after.collectors);
    let cancelled: string | undefined;
    if (host.upgrade_state === 'pending' && host.upgrade_version !== null && refusedBy(after, host.upgrade_version)) {
      cancelled = host.upgrade_version;
      const op = repo.setUpgrade(id, {
        state: null,
        version: host.upgrade_version,
        from: host.upgrade_from,
        requestedAt: host.upgrade_requested_at,
        startedAt: null,
        finishedAt: ctx.clock.now(),
      });
      if (op) announceOperation(op);
    }
    const changes = changesBetween(before, after);
    const said = changes.length ? `: ${changes.map((c) => c.field).join(', ')}` : ' without changes';
    audit.write({
      action: 'host.update',
      subject: hostSubject(host),
      summary: `${nameOf()} changed the settings of host ${host.hostname}${said}${cancelled ? `; the pending upgrade to ${cancelled} was called off` : ''}`,
      changes,
      detail: { host: host.hostname, ...patch, ...(cancelled ? { cancelled_upgrade: cancelled } : {}) },
    });
  });
}
