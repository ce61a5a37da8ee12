import path from 'node:path';
import { createAccountService } from './access/accounts.js';
import type { PasswordCost } from './access/passwords.js';
import { createAuditLog } from './audit.js';
import { createBackupService } from './backup/service.js';
import { backupSourcesOn } from './backup-sources.js';
import { createCampaignService } from './campaigns/service.js';
import { createCollections } from './collections/service.js';
import { createSnapshotService, type SnapshotOptions } from './backup/snapshots.js';
import type { AppContext } from './context.js';
import { createEventHub, type LiveEventsOptions } from './events/hub.js';
import { createFileCache } from './files/service.js';
import { createFleetHealth } from './fleet/service.js';
import { offeredVersion } from './releases/channels.js';
import { createReleases } from './releases/releases.js';
import { accountHooks, createSignInRepo } from './signin/repo.js';
import { createSignIn } from './signin/service.js';
import { createHostService, type HeartbeatListener, type HostsOptions } from './hosts/service.js';
import { createJobService, type JobsOptions } from './jobs/service.js';
import type { CommandChannelOptions } from './operations/command-channel.js';
import { createHostOperationRows } from './operations/host-repo.js';
import { unifiedDiff } from './operations/config-diff.js';
import { createOperationService } from './operations/service.js';
import { carriesKeyMaterial } from './provisioning/key-material.js';
import { createProvisioning } from './provisioning/service.js';
import { createMonitoring, type MonitoringOptions } from './monitoring/service.js';
import { createScripts } from './scripts/service.js';
import { createInstanceService } from './registry/service.js';
import { createTelemetryRepo } from './telemetry/repo.js';
import { createTokenService } from './tokens/service.js';
import { createUsageRetention, type UsageRetentionOptions } from './usage/retention.js';
import { createUsageService } from './usage/service.js';
import { createUsageStats } from './usage/stats.js';
import { packageRoot } from './web/routes.js';

export interface ServiceOptions {
  jobs?: JobsOptions;
  liveEvents?: LiveEventsOptions;
  usageRetention?: UsageRetentionOptions;
  hosts?: HostsOptions & { agentDir?: string; keptAgentsDir?: string; commandPolls?: CommandChannelOptions };
  snapshots?: SnapshotOptions;
  /** Metric roll-ups, alert evaluation and notification retries; tests shorten them. */
  monitoring?: MonitoringOptions;
  /** A lower scrypt cost for new password hashes, for in-process tests that do not test hashing; the product never sets it. */
  passwordCost?: PasswordCost;
}

/** How often hosts are swept for missed heartbeats and timed-out upgrades. */
const HOST_SWEEP_MS = 5_000;

/**
 * Every service of the app, each built once (Beszel's hub): the routes are handed what they serve,
 * and nothing else builds a service. Building starts nothing; `start` does, `close` stops it all in
 * the reverse order and is the caller's to await before the database closes.
 */
export function createServices(context: AppContext, options: ServiceOptions = {}) {
  const audit = createAuditLog(context);
  const signInRepo = createSignInRepo(context.db);
  // A password login of an account with a confirmed TOTP factor waits for its code (server/signin).
  const accounts = createAccountService(context, audit, { ...accountHooks(signInRepo), passwordCost: options.passwordCost });
  const signIn = createSignIn(context, accounts, audit, signInRepo);
  const tokens = createTokenService(context, audit, accounts.repo);
  const instances = createInstanceService(context, audit);
  const { serverKeys, cloudConfigs } = createProvisioning(context, audit);
  // Versions are diffed as guest configs are: bounded in size and time, and in steps of the event loop.
  const scripts = createScripts(context, audit, unifiedDiff);
  const jobs = createJobService(context, instances, audit, options.jobs);
  // Campaigns freeze their targets from `collections.vmidsOf(id)`.
  const collections = createCollections(context, audit, instances);
  const backup = createBackupService(context, audit, backupSourcesOn(context.db));
  const snapshots = createSnapshotService(context, options.snapshots);
  const usage = createUsageService(context);
  const usageStats = createUsageStats(context.db);
  const usageRetention = createUsageRetention(context, options.usageRetention);
  const telemetry = createTelemetryRepo(context.db);
  const liveEvents = createEventHub(context, { accounts: accounts.repo, tokens: tokens.repo }, options.liveEvents);
  const releases = createReleases(
    {
      agentDir: options.hosts?.agentDir ?? path.join(packageRoot(), 'reporter'),
      keptDir: options.hosts?.keptAgentsDir ?? path.join(packageRoot(), 'build', 'agents'),
    },
    context.config.dbPath,
    context.clock,
  );
  const heartbeatIntervalS = options.hosts?.heartbeatIntervalS ?? context.config.heartbeatIntervalS;
  // Built after hosts (it reads them), but hosts hand it each heartbeat's numbers: bound late.
  let recordMetrics: HeartbeatListener = async () => () => undefined;
  // Hosts and operations each need a little of the other, handed over as functions: operations are
  // built after hosts (they take its rows), so hosts call them late.
  const hosts = createHostService(context, {
    instances,
    releases,
    audit,
    heartbeatIntervalS,
    onHeartbeat: (hostId, body, now) => recordMetrics(hostId, body, now),
    operationRows: createHostOperationRows(context.db),
    commands: {
      commandsFor: (host, now) => operations.commandsFor(host, now),
      sweep: (now) => operations.sweep(now),
      requestUpgrade: (hostId, request, who) => operations.requestUpgrade(hostId, request, who),
      announce: (id) => operations.announce(id),
      isMuted: (hostId) => operations.isMuted(hostId),
    },
  });
  // The file cache keeps what a push needs (an `upload` operation, pending or sent, naming the file):
  // operations are built after it, so it asks them late.
  const files = createFileCache(context, audit, { inUse: (id) => operations.fileInUse(id) });
  const operations = createOperationService(context, {
    audit,
    hosts: hosts.repo,
    isOnline: hosts.isOnline,
    announceStatus: hosts.announceStatus,
    instances,
    launchables: { serverKey: serverKeys.get, cloudConfig: cloudConfigs.get, carriesKeyMaterial },
    scripts: { get: scripts.get },
    releases,
    storageOf: hosts.storages.storageOf,
    files: { get: (id) => files.get(id), touch: (id) => files.touch(id) },
    commandPolls: options.hosts?.commandPolls,
  });
  instances.usePlacements(hosts.placements);
  const campaigns = createCampaignService(context, {
    audit,
    fleet: {
      host(id, now) {
        const host = hosts.repo.hostById(id);
        return (
          host && {
            id: host.id,
            hostname: host.hostname,
            state: host.state,
            online: hosts.isOnline(host, now),
            agent_version: host.agent_version,
            agent_channel: host.agent_channel,
            agent_pin: host.agent_pin,
          }
        );
      },
      guestsOf: (hostId) => hosts.repo.guestsOf(hostId),
      guest: (hostId, vmid) => hosts.repo.guestOf(hostId, vmid),
      hostOf: (vmid) => hosts.placements().get(vmid)?.host.id,
      registryNames: (vmids) => new Map(instances.byVmids(vmids).map((i) => [i.vmid, i.name])),
      maintenanceClosed: (hostId, now) => operations.maintenance.closed(hostId, now),
    },
    collections,
    launch: {
      guestAction: (hostId, vmid, body, who) => operations.guestActions.request(hostId, vmid, body, who),
      script: (hostId, vmid, scriptId, timeoutS, who) => operations.scripts.request(hostId, vmid, scriptId, timeoutS, who),
      upgrade: (hostId, version, who) => operations.requestUpgrade(hostId, { version }, who),
      agentVersions: () => releases.versions(),
      newestAgent: (channel) => releases.newest(channel),
      scriptRunsOn: (id) => scripts.get(id)?.runs_on,
      operation(id) {
        try {
          return operations.operations.get(id, false);
        } catch {
          return undefined;
        }
      },
      cancel: (id, who, managesHosts) => operations.operations.cancel(id, who, managesHosts),
    },
  });
  const fleet = createFleetHealth(context, {
    collectionVmids: collections.vmidsOf,
    audit,
    instances,
    jobs,
    placements: () => hosts.placements(),
    hosts: {
      facts() {
        const now = context.clock.now();
        return hosts.repo
          .listHosts()
          .filter((h) => h.state !== 'deleted')
          .map((h) => ({
            id: h.id,
            hostname: h.hostname,
            online: hosts.isOnline(h, now),
            last_heartbeat_at: h.last_heartbeat_at,
            agent_version: h.agent_version,
            agent_channel: h.agent_channel,
            agent_pin: h.agent_pin,
            offered: offeredVersion(h, releases.newest),
          }));
      },
    },
  });
  const monitoring = createMonitoring(context, { audit, hosts, instances, jobs, snapshots, fleet, heartbeatIntervalS }, options.monitoring);
  recordMetrics = monitoring.metrics.prepare;
  const { metrics, alerts, notifications } = monitoring;

  let closed = false;
  /** Live streams and agents' command polls never end by themselves, and the HTTP server's close waits on them. */
  const endStreams = () => {
    liveEvents.close();
    operations.closePolls();
  };
  return {
    audit, accounts, signIn, tokens, instances, collections, jobs, backup, snapshots, usage, usageStats, usageRetention, telemetry, liveEvents, releases, hosts, operations,
    metrics, alerts, notifications, monitoring, serverKeys, cloudConfigs, files, scripts, campaigns, fleet,

    /** The background work: each feature registers its tasks (server/tasks.ts), then the runner arms them all. */
    start(): void {
      snapshots.start();
      jobs.start();
      usageRetention.start();
      monitoring.start();
      fleet.start();
      context.tasks.every('hosts.sweep', HOST_SWEEP_MS, () => hosts.sweep());
      campaigns.start();
      context.tasks.start();
    },

    endStreams,

    /**
     * The one shutdown, in order: live streams and polls end, the runner stops and waits for the
     * tasks going on, then each feature's own work in flight (job runs, deliveries, a snapshot being
     * taken). The database is the caller's to close after it.
     */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      endStreams();
      await context.tasks.stop();
      await monitoring.close();
      await fleet.close();
      await jobs.close();
      await snapshots.close();
      await backup.close();
      files.close();
    },
  };
}

export type Services = ReturnType<typeof createServices>;
