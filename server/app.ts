import path from 'node:path';
import express, { type Express, type RequestHandler } from 'express';
import type { AccountService } from './access/accounts.js';
import type { PasswordCost } from './access/passwords.js';
import { createAuthentication } from './access/authenticate.js';
import { registerAccessRoutes } from './access/routes.js';
import { registerSetupRoutes } from './access/setup.js';
import type { AuditLog } from './audit.js';
import { registerBackupRoutes } from './backup/routes.js';
import { registerCampaignRoutes } from './campaigns/routes.js';
import { registerCollectionRoutes } from './collections/routes.js';
import type { Collections } from './collections/service.js';
import { snapshotDirectory, type SnapshotOptions, type SnapshotService } from './backup/snapshots.js';
import { defaultConfig, type Config } from './config.js';
import { createContext, type AppContext } from './context.js';
import { answerAfterCommit, waitForWrites } from './http/after-commit.js';
import { openDatabase, type Db } from './db/database.js';
import { errorMiddleware } from './errors.js';
import type { EventHub, LiveEventsOptions } from './events/hub.js';
import { registerEventRoutes } from './events/routes.js';
import { registerFileRoutes } from './files/routes.js';
import { registerFleetRoutes } from './fleet/routes.js';
import { registerHealthRoutes } from './health/routes.js';
import { KEY_FILE } from './releases/releases.js';
import { agentCredentials, registerHostRoutes } from './hosts/routes.js';
import { registerReleaseRoutes } from './releases/routes.js';
import type { CommandChannelOptions } from './operations/command-channel.js';
import type { OperationService } from './operations/service.js';
import { registerOperationRoutes } from './operations/routes.js';
import { registerStorageOperationRoutes } from './operations/storage-routes.js';
import type { HostService, HostsOptions } from './hosts/service.js';
import { hostCheck } from './http/host-check.js';
import { requestId } from './http/request-id.js';
import { RouteTable, type Authenticate, type RouteRecord } from './http/routes.js';
import { registerJobRoutes } from './jobs/routes.js';
import { registerAlertRoutes } from './alerts/routes.js';
import { registerMetricRoutes } from './metrics/routes.js';
import type { Monitoring, MonitoringOptions } from './monitoring/service.js';
import { registerNotificationRoutes } from './notifications/routes.js';
import type { JobService, JobsOptions } from './jobs/service.js';
import { createLogger, requestLogger, type Logger } from './logger.js';
import { registerProvisioningRoutes } from './provisioning/routes.js';
import { registerRegistryRoutes } from './registry/routes.js';
import { registerScriptRoutes } from './scripts/routes.js';
import type { InstanceService } from './registry/service.js';
import { createServices } from './services.js';
import { registerSignInRoutes } from './signin/routes.js';
import { registerTelemetryRoutes } from './telemetry/routes.js';
import { systemClock, type Clock } from './time.js';
import { registerTokenRoutes } from './tokens/routes.js';
import type { TokenService } from './tokens/service.js';
import { registerOpenApiRoutes } from './openapi/routes.js';
import type { TlsInfo } from './context.js';
import { selfSignedPaths } from './tls/setup.js';
import { makePrivateDir, tightenModes } from './private-files.js';
import type { UsageRetentionOptions } from './usage/retention.js';
import { registerUsageRoutes } from './usage/routes.js';
import { defaultRendererDir, registerWebRoutes } from './web/routes.js';

export interface AppOptions {
  /** Overrides of the configuration; tests and the desktop app pass theirs here. */
  config?: Partial<Config>;
  /** Shorthand for `config.dbPath`; `:memory:` for an in-memory database. */
  dbPath?: string;
  clock?: Clock;
  logger?: Logger;
  /** Scheduler and remote-call timing; tests shorten them. */
  jobs?: JobsOptions;
  /** The built dashboard (index.html and assets/); default dist/renderer in the package. */
  rendererDir?: string;
  /** The certificate facts when the server will speak HTTPS itself (server/tls prepareTls). */
  tls?: TlsInfo;
  /** The live event stream's intervals, buffer and caps; tests shorten the intervals. */
  liveEvents?: LiveEventsOptions;
  /** How often old usage reports are deleted (daily); tests shorten it. */
  usageRetention?: UsageRetentionOptions;
  /** Hosts and agents: where the agent and installer sources are (default reporter/), kept versions (default build/agents/), heartbeat interval. */
  hosts?: HostsOptions & { agentDir?: string; keptAgentsDir?: string; commandPolls?: CommandChannelOptions };
  /** Snapshot timing; tests shorten it. */
  snapshots?: SnapshotOptions;
  /** Metric roll-ups, alert evaluation and notification retries; tests shorten them. */
  monitoring?: MonitoringOptions;
  /** A lower scrypt cost for new password hashes, for in-process tests that do not test hashing (test/helpers/server.ts); main.ts never sets it. */
  passwordCost?: PasswordCost;
}

export interface HomefleetApp {
  app: Express;
  db: Db;
  context: AppContext;
  instances: InstanceService;
  /** Saved filters; campaigns freeze their targets with `collections.vmidsOf(id)`. */
  collections: Collections;
  accounts: AccountService;
  tokens: TokenService;
  /** The one audit log: every feature writes its entries through it, inside the change's transaction. */
  audit: AuditLog;
  jobs: JobService;
  /** Open live event streams; close() ends them, so call it before waiting on the HTTP server to close. */
  liveEvents: EventHub;
  hosts: HostService;
  /** Every command to agents: guest actions, deploys, script runs (`operations.scripts.request`), … */
  operations: OperationService;
  /** Database snapshots (scheduled, before imports, on demand). */
  snapshots: SnapshotService;
  /** Metrics, alerts and notifications (server/monitoring/). */
  monitoring: Monitoring;
  /** Every route with its declared access, for the route audit test and the docs. */
  routes: readonly RouteRecord[];
  /** The authentication step the route table uses, for tests that guard routes of their own. */
  authenticate: Authenticate;
  /**
   * The one shutdown, in order: live streams and agents' command polls end (they would hold the HTTP
   * server), `drain` runs (the caller's: its HTTP server's close, which lets requests in flight
   * finish), the background tasks stop and the features' work in flight ends, then the database
   * closes. Without `drain`, the HTTP server is the caller's to close first. Asked twice: one shutdown.
   */
  close(drain?: () => Promise<unknown>): Promise<void>;
}

export function createApp(options: AppOptions = {}): HomefleetApp {
  const config = defaultConfig({
    ...options.config,
    ...(options.dbPath ? { dbPath: options.dbPath } : {}),
    ...(options.tls ? { tlsNames: options.tls.names } : {}),
  });
  const logger = options.logger ?? createLogger(config.logLevel);
  if (config.dbPath !== ':memory:') keepDataPrivate(config.dbPath, logger);
  const db = openDatabase(config.dbPath);
  const context: AppContext = createContext({ db, config, clock: options.clock ?? systemClock, logger, tls: options.tls });

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // No ETag on JSON answers: they are not cached (no-store), and hashing every body cost the list
  // route about a tenth of its throughput. Assets (sendFile) keep theirs; the page sets its own.
  app.set('etag', false);
  // Forwarded headers are believed only from the configured proxy hop: a count ("1") or 'loopback', an address, a subnet.
  if (config.trustProxy) app.set('trust proxy', /^\d+$/.test(config.trustProxy) ? Number(config.trustProxy) : config.trustProxy);
  app.use(answerAfterCommit(context.commits));
  app.use(requestId());
  app.use(requestLog(logger));
  app.use(hostCheck(config, logger));
  app.use(waitForWrites(context.commits));

  const services = createServices(context, options);
  const { audit, accounts, tokens, instances, jobs, backup, snapshots, liveEvents, releases, hosts } = services;
  const { signIn } = services;
  // FLEET_REQUIRE_2FA is told on every resolved session and token (server/signin).
  const authentication = createAuthentication(config, accounts.throttle, {
    session: (token, touch) => signIn.gate(accounts.resolveSession(token, touch)),
    token: { prefix: tokens.prefix, resolve: (token, ip) => signIn.gate(tokens.authenticate(token, ip)) },
    agents: agentCredentials(hosts),
  });
  const routes = new RouteTable(authentication.authenticate);
  registerHealthRoutes(routes, context);
  registerSetupRoutes(routes, context, accounts);
  registerAccessRoutes(routes, context, accounts, audit);
  registerSignInRoutes(routes, context, signIn);
  registerTokenRoutes(routes, tokens);
  registerTelemetryRoutes(routes, context, services.telemetry);
  registerRegistryRoutes(routes, context, instances);
  registerCollectionRoutes(routes, services.collections);
  registerJobRoutes(routes, jobs);
  registerBackupRoutes(routes, backup, snapshots, audit);
  registerUsageRoutes(routes, services.usage, services.usageStats, context.clock, services.usageRetention.policy);
  registerEventRoutes(routes, liveEvents);
  // Before the agent routes: no personal token reaches any of them, whatever path it asks for.
  routes.use('/api/agent', authentication.refusePersonalTokens);
  registerHostRoutes(routes, context, hosts);
  registerOperationRoutes(routes, services.operations);
  registerStorageOperationRoutes(routes, services.operations.storage);
  registerReleaseRoutes(routes, context, releases);
  registerMetricRoutes(routes, {
    metrics: services.metrics,
    hostName: (id) => hosts.repo.hostById(id)?.hostname,
    gauges: services.monitoring.gauges,
  });
  registerAlertRoutes(routes, services.alerts);
  registerNotificationRoutes(routes, services.notifications);
  registerProvisioningRoutes(routes, services.serverKeys, services.cloudConfigs);
  registerScriptRoutes(routes, services.scripts);
  registerFileRoutes(routes, services.files);
  registerCampaignRoutes(routes, services.campaigns);
  registerFleetRoutes(routes, services.fleet);
  // After every feature: the API document lists the route table as registered so far.
  registerOpenApiRoutes(routes);
  // Last: its catch-all answers every GET page path that no feature claimed.
  registerWebRoutes(routes, options.rendererDir ?? defaultRendererDir());
  services.start();

  app.use(routes.router);
  app.use('/api', (_req, res) => {
    res.status(404).json({ error: 'not found' });
  });
  app.use(errorMiddleware(logger));

  let closing: Promise<void> | undefined;
  return {
    app,
    db,
    context,
    instances,
    collections: services.collections,
    accounts,
    tokens,
    audit,
    jobs,
    liveEvents,
    hosts,
    operations: services.operations,
    snapshots,
    monitoring: services.monitoring,
    routes: routes.records,
    authenticate: authentication.authenticate,
    close(drain) {
      closing ??= (async () => {
        services.endStreams();
        await drain?.();
        await services.close();
        context.commits.flush();
        db.close();
      })();
      return closing;
    },
  };
}

/**
 * The data folder holds the database, its snapshots and the private keys: at every start it is made
 * (0700) when missing, and what someone loosened is tightened again (folders 0700, files 0600), with
 * a warning naming each path, so a key made 0644 is not used without a word.
 */
function keepDataPrivate(dbPath: string, logger: Logger): void {
  const db = path.resolve(dbPath);
  const dir = path.dirname(db);
  makePrivateDir(dir);
  const paths = [dir, snapshotDirectory(db), db, `${db}-wal`, `${db}-shm`, `${db}.before-restore`, path.join(dir, KEY_FILE), selfSignedPaths(db)!.key];
  for (const report of tightenModes(paths)) {
    if (report.action === 'tightened') {
      logger.warn({ path: report.path, was: report.was }, `${report.path} was readable by other users (${report.was}); made it the server user's only`);
    } else {
      logger.warn({ path: report.path, was: report.was }, `${report.path} is readable by other users (${report.was}); left as it is because ${report.why}`);
    }
  }
}

/**
 * One line per request: method, path (never the query or body), status, duration, request id. Nothing
 * at all when the level leaves `info` out. Written through requestLogger: no redaction pass (the
 * request id is of a shape that holds no secret), and batched.
 */
function requestLog(logger: Logger): RequestHandler {
  if (!logger.isLevelEnabled('info')) return (_req, _res, next) => next();
  const log = requestLogger(logger);
  return (req, res, next) => {
    const started = performance.now();
    res.on('finish', () => {
      log.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round((performance.now() - started) * 10) / 10, request_id: res.locals.requestId }, 'request');
    });
    next();
  };
}
