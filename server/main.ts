import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { VERSION } from './version.js';

/** The headless server: configuration from the environment, clean shutdown on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`homefleet: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const homefleet = createApp({ config, logger });
  const server = homefleet.app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = config.host.includes(':') ? `[${config.host}]` : config.host;
  logger.info({ version: VERSION, db: config.dbPath }, `homefleet listening on http://${shownHost}:${port}`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Stop accepting, let in-flight requests finish, then close the database.
    const force = setTimeout(() => {
      logger.warn('requests still open after 10 s; closing them');
      server.closeAllConnections();
    }, 10_000);
    force.unref();
    // Event streams never finish by themselves: end them first, or close would wait the full 10 s.
    homefleet.liveEvents.close();
    server.close(() => {
      void homefleet.close().then(() => {
        logger.info('stopped');
        process.exit(0);
      });
    });
    server.closeIdleConnections();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`homefleet: ${message}\n`);
  process.exit(1);
});
