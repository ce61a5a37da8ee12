import express, { type Express, type RequestHandler } from 'express';
import { createAccountService, type AccountService } from './access/accounts.js';
import { createAccessGuard } from './access/guard.js';
import { registerAccessRoutes } from './access/routes.js';
import { registerSetupRoutes } from './access/setup.js';
import { registerBackupRoutes } from './backup/routes.js';
import type { SnapshotOptions, SnapshotService } from './backup/snapshots.js';
import { defaultConfig, type Config } from './config.js';
import { createEvents, type AppContext } from './context.js';
import { openDatabase, type Db } from './db/database.js';
import { errorMiddleware } from './errors.js';
import { registerHealthRoutes } from './health/routes.js';
import { RouteTable, type RouteRecord } from './http/routes.js';
import { registerJobRoutes } from './jobs/routes.js';
import { createJobService, type JobService, type JobsOptions } from './jobs/service.js';
import { createLogger, type Logger } from './logger.js';
import { registerRegistryRoutes } from './registry/routes.js';
import { createInstanceService, type InstanceService } from './registry/service.js';
import { registerTelemetryRoutes } from './telemetry/routes.js';
import { systemClock, type Clock } from './time.js';
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
  /** Database snapshots (scheduled, before imports, on demand). */
  snapshots: SnapshotService;
  /** Every route with its declared access, for the route audit test and the docs. */
  routes: readonly RouteRecord[];
  /** Stops background work and closes the database. The HTTP server is the caller's to close first. */
  close(): Promise<void>;
}

export function createApp(options: AppOptions = {}): HomefleetApp {
  const config = defaultConfig({ ...options.config, ...(options.dbPath ? { dbPath: options.dbPath } : {}) });
  const logger = options.logger ?? createLogger(config.logLevel);
  const db = openDatabase(config.dbPath);
  const context: AppContext = { db, config, clock: options.clock ?? systemClock, logger, events: createEvents() };

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // Forwarded headers are believed only from the configured proxy hop: a count ("1") or 'loopback', an address, a subnet.
  if (config.trustProxy) app.set('trust proxy', /^\d+$/.test(config.trustProxy) ? Number(config.trustProxy) : config.trustProxy);
  app.use(requestLog(logger));

  const accounts = createAccountService(context);
  const routes = new RouteTable(createAccessGuard(context, accounts));
  const instances = createInstanceService(context);
  registerHealthRoutes(routes, context);
  registerSetupRoutes(routes, context, accounts);
  registerAccessRoutes(routes, context, accounts);
  registerTelemetryRoutes(routes, context);
  registerRegistryRoutes(routes, context, instances);
  const jobs = createJobService(context, instances, options.jobs);
  registerJobRoutes(routes, jobs);
  const snapshots = registerBackupRoutes(routes, context, options.snapshots);
  jobs.start();
  registerUsageRoutes(routes, context);
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
    snapshots,
    routes: routes.records,
    async close() {
      if (closed) return;
      closed = true;
      await jobs.close();
      await snapshots.close();
      db.close();
    },
  };
}

/** One line per request: method, path (never the query or body), status, duration. */
function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
    });
    next();
  };
}
