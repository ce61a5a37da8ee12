import type { AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { HostEvent } from '../contract/hosts.js';
import { conflict } from '../errors.js';
import type { InstanceService } from '../registry/service.js';
import { createCommandChannel, type CommandChannelOptions } from './command-channel.js';
import { sweepCommands } from './commands/index.js';
import { createAutoUpgrades, createUpgradeRequests } from './commands/upgrade.js';
import { createCredentials } from './credentials.js';
import { createDriftApply } from './drift-apply.js';
import { createEnrollment } from './enroll.js';
import { createGuestActions } from './guest-actions.js';
import { createGuestConfigs } from './guest-configs.js';
import { createHeartbeats } from './heartbeat.js';
import { createMaintenance, createMaintenanceRepo } from './maintenance.js';
import { createOperations } from './operations.js';
import { createOperationRepo } from './operations-repo.js';
import { requireHost, type HostParts, type Who } from './parts.js';
import { createPlacements } from './placements.js';
import { createHostView, presentDeletion } from './present.js';
import type { Releases } from './releases.js';
import { createRemoval } from './removal.js';
import { createHostRepo } from './repo.js';
import type { Deletion, HostDetail } from '../contract/hosts.js';
import type { HeartbeatBody, HostPatch } from './schema.js';

export interface HostsOptions {
  /** Seconds between heartbeats, sent to agents (default 30). */
  heartbeatIntervalS?: number;
  /** The command poll's limits (GET /api/agent/commands). */
  commandPolls?: CommandChannelOptions;
}

/**
 * Work another feature does with each heartbeat (the metric store folds its numbers in): called
 * before the heartbeat's transaction, where it may take several turns, it resolves to what runs inside it.
 */
export type HeartbeatListener = (hostId: number, body: HeartbeatBody, now: number) => Promise<() => void>;

export interface HostDeps extends HostsOptions {
  instances: InstanceService;
  releases: Releases;
  /** The app's audit log. */
  audit: AuditLog;
  onHeartbeat?: HeartbeatListener;
}

export type { HostEvent, Who };

export type HostService = ReturnType<typeof createHostService>;

/**
 * Hosts and their agents, one part per file: enrollment (enroll.ts), credentials, the heartbeat
 * and the commands its answer carries (heartbeat.ts, commands/), removal, drift and presentation.
 */
export function createHostService(ctx: AppContext, deps: HostDeps) {
  const repo = createHostRepo(ctx.db);
  const view = createHostView(repo, deps.releases, ctx.clock, deps.heartbeatIntervalS ?? 30);
  const parts: HostParts = { ctx, repo, audit: deps.audit, view, ops: createOperationRepo(ctx.db), instances: deps.instances };
  const enrollment = createEnrollment(parts, deps.releases);
  const credentials = createCredentials(parts);
  const removal = createRemoval(parts);
  const applyDrift = createDriftApply(parts, deps.instances);
  const placements = createPlacements(ctx.db, () => view.freshSince());
  const heartbeats = createHeartbeats(parts, applyDrift, placements, deps.onHeartbeat);
  const requestUpgrade = createUpgradeRequests(parts, deps.releases);
  const channel = createCommandChannel(ctx.tasks, deps.commandPolls);
  const maintenanceRepo = createMaintenanceRepo(ctx.db);
  const maintenance = createMaintenance(parts, maintenanceRepo);
  const autoUpgrade = createAutoUpgrades(parts, deps.releases, maintenanceRepo);
  const operations = createOperations(parts, channel);
  const guestActions = createGuestActions(parts, maintenance, channel);
  const guestConfigs = createGuestConfigs(parts);
  // A host removed (or its name changed) moves where its guests show in the registry.
  ctx.bus.on('host.status', () => placements.invalidate());

  const updateTx = ctx.transaction((id: number, patch: HostPatch, who: Who) => {
    const host = requireHost(repo, id);
    if (host.state === 'deleted') throw conflict('host is deleted');
    repo.setSettings(id, patch.sync_registry, undefined);
    parts.audit.write({ ...who, action: 'host.update', target: `host:${id}`, detail: { host: host.hostname, ...patch } });
  });

  return {
    repo,

    /**
     * Run every few seconds by the app: announces hosts that went offline on host.status, and lets
     * each kind of command write down what got no answer in time (an upgrade after 5 minutes).
     */
    sweep(): void {
      const now = ctx.clock.now();
      heartbeats.sweepOffline(now);
      sweepCommands(parts, now);
      autoUpgrade(now);
    },

    createEnrollmentToken: enrollment.createEnrollmentToken,
    listEnrollmentTokens: view.listEnrollmentTokens,
    revokeEnrollmentToken: enrollment.revokeEnrollmentToken,
    enroll: enrollment.enroll,

    findUsableEnrollmentToken: credentials.findUsableEnrollmentToken,
    findHostByToken: credentials.findHostByToken,
    findDeletionByReceipt: credentials.findDeletionByReceipt,
    revokeHostToken: credentials.revokeHostToken,

    admitHeartbeat: heartbeats.admit,
    heartbeat: heartbeats.heartbeat,

    list: view.list,
    get: view.get,

    update(id: number, patch: HostPatch, who: Who): HostDetail {
      updateTx(id, patch, who);
      return view.get(id);
    },

    remove: (id: number, force: boolean, who: Who): Deletion => presentDeletion(removal.remove(id, force, who))!,
    confirmReceipt: removal.confirmReceipt,

    requestUpgrade(id: number, request: { version?: string; rollback?: boolean }, who: Who): HostDetail {
      requestUpgrade(id, request, who);
      return view.get(id);
    },

    applyDrift,

    /** Where each vmid's guest runs, for the registry's `host` and `guest_status`. */
    placements: placements.lookup,
    operations,
    guestActions,
    guestConfigs,
    maintenance,
    /** "`muted` keeps the host's alerts from notifying (they are still recorded)": for alerts and notifications. */
    isMuted: (hostId: number): boolean => maintenanceRepo.isMuted(hostId),
    /** Server shutdown: waiting command polls are answered at once (they would hold the HTTP server's close). */
    closePolls: () => channel.close(),
  };
}
