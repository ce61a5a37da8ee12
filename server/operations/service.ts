import type { AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { AgentCommand } from '../contract/hosts.js';
import type { HostRepo, HostRow } from '../hosts/repo.js';
import type { InstanceService } from '../registry/service.js';
import type { Releases } from '../releases/releases.js';
import { createCommandChannel, type CommandChannelOptions } from './command-channel.js';
import { commandsFor, sweepCommands } from './commands/index.js';
import { createAutoUpgrades, createUpgradeRequests } from './commands/upgrade.js';
import { createGuestActions } from './guest-actions.js';
import { createDeploys } from './deploys.js';
import { createGuestConfigs } from './guest-configs.js';
import type { Launchables } from './launch.js';
import { createMaintenance, createMaintenanceRepo } from './maintenance.js';
import { createOperations } from './operations.js';
import { announceOperation, type OperationParts } from './parts.js';
import { createOperationRepo } from './repo.js';
import type { ScriptSource } from './script-source.js';
import { createScriptRuns } from './scripts.js';
import { createStorageOperations, type CachedFiles, type StorageOf } from './storage-ops.js';

/** What operations are handed by server/services.ts: of hosts, their rows and two functions (no host service). */
export interface OperationDeps {
  audit: AuditLog;
  /** The hosts' rows: a command goes to a host, and upgrades and removals move its row. */
  hosts: HostRepo;
  /** A heartbeat within the last three intervals. */
  isOnline: (host: HostRow, now: number) => boolean;
  /** host.status with the host as it is now. */
  announceStatus: (hostId: number) => void;
  instances: InstanceService;
  /** Saved server keys and cloud configs by id (server/provisioning). */
  launchables: Launchables;
  /** Scripts by id (server/scripts): what a script run sends. */
  scripts: ScriptSource;
  releases: Releases;
  /** One storage of a host's last heartbeat (server/hosts/storage.ts): downloads and pushes go only where it holds their content. */
  storageOf: StorageOf;
  /** The file cache (server/files): what a push sends, and where its bytes are for the agent's fetch. */
  files: CachedFiles;
  /** The command poll's limits (GET /api/agent/commands). */
  commandPolls?: CommandChannelOptions | undefined;
}

export type OperationService = ReturnType<typeof createOperationService>;

/**
 * Everything an agent is asked to do, one part per file: the command channel, guest actions, log
 * requests and results, guest configs, maintenance windows, and `commands/` (one file per command).
 */
export function createOperationService(ctx: AppContext, deps: OperationDeps) {
  const parts: OperationParts = {
    ctx,
    audit: deps.audit,
    ops: createOperationRepo(ctx.db),
    repo: deps.hosts,
    isOnline: deps.isOnline,
    announceStatus: deps.announceStatus,
    instances: deps.instances,
    launchables: deps.launchables,
    scripts: deps.scripts,
  };
  const requestUpgrade = createUpgradeRequests(parts, deps.releases);
  const channel = createCommandChannel(ctx.tasks, deps.commandPolls);
  const maintenanceRepo = createMaintenanceRepo(ctx.db);
  const maintenance = createMaintenance(parts, maintenanceRepo);
  const autoUpgrade = createAutoUpgrades(parts, deps.releases, maintenanceRepo);
  const operations = createOperations(parts, channel);
  const deploys = createDeploys(parts, channel);
  const guestActions = createGuestActions(parts, maintenance, channel, deploys);
  const guestConfigs = createGuestConfigs(parts);
  const storage = createStorageOperations(parts, channel, deps.storageOf, deps.files);
  const scripts = createScriptRuns(parts, channel);

  return {
    operations,
    guestActions,
    deploys,
    /** Lent by server/provisioning: the routes search a launch body for key material with it. */
    launchables: deps.launchables,
    guestConfigs,
    maintenance,
    /** Downloads and pushes onto hosts' storages, and the agent's fetch of a pushed file. */
    storage,
    /** For the file cache's eviction and delete: a pending or sent push needs the file. */
    fileInUse: storage.inUse,
    /** Script runs: `scripts.request(hostId, vmid | null, scriptId, timeoutS, who)`, for campaigns. */
    scripts,

    /** Inside a heartbeat's transaction: what the host reports settles earlier commands, then those due go out. */
    commandsFor: (host: HostRow, now: number): { commands: AgentCommand[]; announcesStatus: boolean } => commandsFor({ ...parts, host, now }),

    /** Run with the host sweep: each kind of command writes down what got no answer in time, then upgrades a window lets start. */
    sweep(now: number): void {
      sweepCommands(parts, now);
      autoUpgrade(now);
    },

    requestUpgrade,
    /** operation.updated for an operation another feature changed (a host's removal). */
    announce: (id: string): void => announceOperation(parts, id),
    /** "`muted` keeps the host's alerts from notifying (they are still recorded)": for alerts and notifications. */
    isMuted: (hostId: number): boolean => maintenanceRepo.isMuted(hostId),
    /** Server shutdown: waiting command polls are answered at once (they would hold the HTTP server's close). */
    closePolls: () => channel.close(),
  };
}
