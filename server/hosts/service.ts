import type { AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { AgentCommand, HostEvent } from '../contract/hosts.js';
import type { InstanceService } from '../registry/service.js';
import { createCredentials } from './credentials.js';
import { createDriftApply } from './drift-apply.js';
import { createEnrollment } from './enroll.js';
import { createHeartbeats } from './heartbeat.js';
import { announceStatus, type HostParts, type Who } from './parts.js';
import { createPlacements } from './placements.js';
import { createHostView, presentDeletion } from './present.js';
import type { Releases } from '../releases/releases.js';
import { createRemoval } from './removal.js';
import { createHostRepo, type HostOperationRows, type HostRow } from './repo.js';
import { createHostSettings } from './settings.js';
import { createHostStorages } from './storage.js';
import type { Deletion, HostDetail } from '../contract/hosts.js';
import type { HostPatch } from '../contract/inputs/hosts.js';
import type { HeartbeatBody } from './schema.js';

export interface HostsOptions {
  /** Seconds between heartbeats, sent to agents (default 30). */
  heartbeatIntervalS?: number;
}

/**
 * Work another feature does with each heartbeat (the metric store folds its numbers in): called
 * before the heartbeat's transaction, where it may take several turns, it resolves to what runs inside it.
 */
export type HeartbeatListener = (hostId: number, body: HeartbeatBody, now: number) => Promise<() => void>;

/** What hosts need of operations (server/operations), handed in by server/services.ts. */
export interface HostCommands {
  /** Inside a heartbeat's transaction: what the host reports settles earlier commands, then those due go out. */
  commandsFor(host: HostRow, now: number): { commands: AgentCommand[]; announcesStatus: boolean };
  /** Run with the host sweep: commands that got no answer in time, upgrades a maintenance window lets start. */
  sweep(now: number): void;
  /** POST /api/hosts/:id/upgrade: an upgrade is an operation. */
  requestUpgrade(hostId: number, request: { version?: string; rollback?: boolean }, who: Who): void;
  /** operation.updated for an operation hosts moved (a removal, an upgrade a new pin called off). */
  announce(id: string): void;
  /** Whether the host's maintenance policy mutes its alerts. */
  isMuted(hostId: number): boolean;
}

export interface HostDeps extends HostsOptions {
  instances: InstanceService;
  releases: Releases;
  /** The app's audit log. */
  audit: AuditLog;
  onHeartbeat?: HeartbeatListener;
  commands: HostCommands;
  /** A host's upgrades and removals, kept by operations (server/operations/host-repo.ts). */
  operationRows: HostOperationRows;
}

export type { HostEvent, Who };

export type HostService = ReturnType<typeof createHostService>;

/**
 * Hosts and their agents, one part per file: enrollment (enroll.ts), credentials, the heartbeat
 * (heartbeat.ts; the commands its answer carries come from server/operations), removal, drift and presentation.
 */
export function createHostService(ctx: AppContext, deps: HostDeps) {
  const repo = createHostRepo(ctx.db, deps.operationRows);
  const view = createHostView(repo, deps.releases, ctx.clock, deps.heartbeatIntervalS ?? 30, deps.instances.byVmids);
  const parts: HostParts = { ctx, repo, audit: deps.audit, view, instances: deps.instances };
  const { commands } = deps;
  const enrollment = createEnrollment(parts, deps.releases);
  const credentials = createCredentials(parts);
  const removal = createRemoval(parts, commands.announce);
  const applyDrift = createDriftApply(parts, deps.instances);
  const placements = createPlacements(ctx.db, () => view.freshSince());
  const storages = createHostStorages(ctx);
  const heartbeats = createHeartbeats(parts, applyDrift, placements, commands.commandsFor, storages, deps.onHeartbeat);
  // A host removed (or its name changed) moves where its guests show in the registry.
  ctx.bus.on('host.status', () => placements.invalidate());

  const updateTx = createHostSettings(parts, deps.releases, commands.announce);

  return {
    repo,
    /** Each host's storages and their volumes (PRODUCT.md "Host storage"). */
    storages,

    /**
     * Run every few seconds by the app: announces hosts that went offline on host.status, and lets
     * each kind of command write down what got no answer in time (an upgrade after 5 minutes).
     */
    sweep(): void {
      const now = ctx.clock.now();
      heartbeats.sweepOffline(now);
      commands.sweep(now);
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
    briefs: view.briefs,
    get: view.get,

    update(id: number, patch: HostPatch, who: Who): HostDetail {
      updateTx(id, patch, who);
      return view.get(id);
    },

    remove: (id: number, force: boolean, who: Who): Deletion => presentDeletion(removal.remove(id, force, who))!,
    confirmReceipt: removal.confirmReceipt,

    requestUpgrade(id: number, request: { version?: string; rollback?: boolean }, who: Who): HostDetail {
      commands.requestUpgrade(id, request, who);
      return view.get(id);
    },

    applyDrift,

    /** Where each vmid's guest runs, for the registry's `host` and `guest_status`. */
    placements: placements.lookup,
    /** For operations: a command goes only to a host that is online. */
    isOnline: (host: HostRow, now: number): boolean => view.statusOf(host, now) === 'online',
    announceStatus: (hostId: number): void => announceStatus(parts, hostId),
    /** "`muted` keeps the host's alerts from notifying (they are still recorded)": for alerts and notifications (operations keep the policy). */
    isMuted: commands.isMuted,
  };
}
