import path from 'node:path';
import express, { type Express, type RequestHandler } from 'express';
import { createAccountService, type AccountService } from './access/accounts.js';
import { createAccessGuard } from './access/guard.js';
import { registerAccessRoutes } from './access/routes.js';
import { registerSetupRoutes } from './access/setup.js';
import { registerBackupRoutes } from './backup/routes.js';
import { snapshotDirectory, type SnapshotOptions, type SnapshotService } from './backup/snapshots.js';
import { defaultConfig, type Config } from './config.js';
import { createContext, type AppContext } from './context.js';
import { openDatabase, type Db } from './db/database.js';
import { errorMiddleware } from './errors.js';
import { createEventHub, type EventHub, type LiveEventsOptions } from './events/hub.js';
import { registerEventRoutes } from './events/routes.js';
import { registerHealthRoutes } from './health/routes.js';
import { createReleases, KEY_FILE } from './hosts/releases.js';
import { registerHostRoutes } from './hosts/routes.js';
import { createHostService, type HostService, type HostsOptions } from './hosts/service.js';
import { hostCheck } from './http/host-check.js';
import { RouteTable, type RouteRecord } from './http/routes.js';
import { registerJobRoutes } from './jobs/routes.js';
import { createJobService, type JobService, type JobsOptions } from './jobs/service.js';
import { createLogger, type Logger } from './logger.js';
import { registerRegistryRoutes } from './registry/routes.js';
import { createInstanceService, type InstanceService } from './registry/service.js';
import { registerTelemetryRoutes } from './telemetry/routes.js';
import { systemClock, type Clock } from './time.js';
import { registerTokenRoutes } from './tokens/routes.js';
import { registerOpenApiRoutes } from './openapi/routes.js';
import type { TlsInfo } from './context.js';
import { selfSignedPaths } from './tls/setup.js';
import { makePrivateDir, tightenModes } from './private-files.js';
import { createUsageRetention, type UsageRetentionOptions } from './usage/retention.js';
import { registerUsageRoutes } from './usage/routes.js';
import { defaultRendererDir, packageRoot, registerWebRoutes } from './web/routes.js';

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
  hosts?: HostsOptions & { agentDir?: string; keptAgentsDir?: string };
  /** Snapshot timing; tests shorten it. */
  snapshots?: SnapshotOptions;
}

export interface HomefleetApp {
  app: Express;
  db: Db;
  context: AppContext;
  instances: InstanceService;
  accounts: AccountService;
  jobs: JobService;
  /** Open live event streams; close() ends them, so call it before waiting on the HTTP server to close. */
  liveEvents: EventHub;
  hosts: HostService;
  /** Database snapshots (scheduled, before imports, on demand). */
  snapshots: SnapshotService;
  /** Every route with its declared access, for the route audit test and the docs. */
  routes: readonly RouteRecord[];
  /** Stops background work and closes the database. The HTTP server is the caller's to close first. */
  close(): Promise<void>;
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
  app.use(requestLog(logger));
  app.use(hostCheck(config, logger));

  const accounts = createAccountService(context);
  const routes = new RouteTable(createAccessGuard(context, accounts));
  const instances = createInstanceService(context);
  registerHealthRoutes(routes, context);
  registerSetupRoutes(routes, context, accounts);
  registerAccessRoutes(routes, context, accounts);
  registerTokenRoutes(routes, context, accounts);
  registerTelemetryRoutes(routes, context);
  registerRegistryRoutes(routes, context, instances);
  const jobs = createJobService(context, instances, options.jobs);
  registerJobRoutes(routes, jobs);
  const snapshots = registerBackupRoutes(routes, context, options.snapshots);
  jobs.start();
  const usageRetention = createUsageRetention(context, options.usageRetention);
  usageRetention.start();
  registerUsageRoutes(routes, context, usageRetention.policy);
  const liveEvents = createEventHub(context, accounts.repo, options.liveEvents);
  registerEventRoutes(routes, liveEvents);
  const releases = createReleases(
    {
      agentDir: options.hosts?.agentDir ?? path.join(packageRoot(), 'reporter'),
      keptDir: options.hosts?.keptAgentsDir ?? path.join(packageRoot(), 'build', 'agents'),
    },
    config.dbPath,
    context.clock,
  );
  const hosts = createHostService(context, { instances, releases, heartbeatIntervalS: options.hosts?.heartbeatIntervalS });
  registerHostRoutes(routes, context, hosts, releases);
  const hostSweep = setInterval(() => {
    try {
      hosts.sweep();
    } catch (err) {
      logger.error({ err: { message: (err as Error).message } }, 'host sweep failed');
    }
  }, 5_000);
  hostSweep.unref();
  // After every feature: the API document lists the route table as registered so far.
  registerOpenApiRoutes(routes);
  // Last: its catch-all answers every GET page path that no feature claimed.
  registerWebRoutes(routes, options.rendererDir ?? defaultRendererDir());

  app.use(routes.router);
  app.use('/api', (_req, res) => {
    res.status(404).json({ error: 'not found' });
  });
  app.use(errorMiddleware(logger));

  let closed = false;
  return {
    app,
    db,
    context,
    instances,
    accounts,
    jobs,
    liveEvents,
    hosts,
    snapshots,
    routes: routes.records,
    async close() {
      if (closed) return;
      closed = true;
      liveEvents.close();
      usageRetention.stop();
      clearInterval(hostSweep);
      await jobs.close();
      await snapshots.close();
      db.close();
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
 * One line per request: method, path (never the query or body), status, duration. Nothing at all
 * when the level leaves `info` out. The line's four fields hold no secret, so it is written by a
 * child logger without the redaction pass, which costs five times the line itself.
 */
function requestLog(logger: Logger): RequestHandler {
  if (!logger.isLevelEnabled('info')) return (_req, _res, next) => next();
  const log = logger.child({}, { redact: { paths: [] } });
  return (req, res, next) => {
    const started = performance.now();
    res.on('finish', () => {
      log.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round((performance.now() - started) * 10) / 10 }, 'request');
    });
    next();
  };
}
