import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { stopOnFatalErrors } from './fatal.js';
import { closeServer } from './http/server.js';
import { createLogger } from './logger.js';
import { addressesToOpen, createListener, refreshSelfSigned } from './tls/listen.js';
import { prepareTls } from './tls/setup.js';
import { VERSION } from './version.js';

// A throw nothing catches (in a stream's event handler, say) stops the process with a line saying
// why, for the supervisor to start it again: its state is not to be trusted after that.
stopOnFatalErrors();

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
  let tls;
  try {
    tls = await prepareTls(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`homefleet: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const homefleet = createApp({ config, logger, tls: tls?.info });
  const server = createListener(homefleet.app, tls);
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const open = addressesToOpen(tls, config.host, port);
  logger.info({ version: VERSION, db: config.dbPath, open }, `homefleet listening on ${open.join(', ')}`);
  if (tls?.info.selfSigned) {
    // A server that runs for months renews its certificate without a restart: checked twice a day.
    homefleet.context.tasks.every('tls.renew', 12 * 60 * 60 * 1000, async () => {
      const reason = await refreshSelfSigned(server, config, tls);
      if (reason) logger.warn({ fingerprint: tls.info.fingerprint, spki_pin: tls.info.spkiPin }, `made a new self-signed certificate because ${reason}; new SHA-256 fingerprint ${tls.info.fingerprint}`);
    });
  }
  if (tls) {
    const { selfSigned, fingerprint, spkiPin } = tls.info;
    if (tls.renewed) logger.warn({ certificate: tls.certFile }, `made a new self-signed certificate: the stored one was replaced because ${tls.renewed}`);
    logger.info(
      { certificate: tls.certFile, self_signed: selfSigned, fingerprint, spki_pin: spkiPin },
      `TLS certificate SHA-256 fingerprint ${fingerprint} (public key pin ${spkiPin})` +
        (selfSigned ? ': self-signed; compare this fingerprint with the one your browser shows before accepting it' : ''),
    );
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    homefleet.close(async () => {
      if (!(await closeServer(server, 10_000))) logger.warn('requests still open after 10 s; closed them');
    }).then(
      () => {
        logger.info('stopped');
        exitOnceWritten(0);
      },
      (err: unknown) => {
        logger.error({ err: { message: (err as Error).message } }, 'shutdown failed');
        exitOnceWritten(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/**
 * Ends the process once the event loop is empty, its last log lines written (at most 2 s from now).
 * `process.exit()` right after the last line ran pino's synchronous flush while that line was still
 * being written, and when stdout's reader had gone meanwhile (a log collector stopped with the
 * server), sonic-boom 4's flush retried the broken pipe every 100 ms forever: the process never ended.
 * Written on the event loop, the line fails instead, and pino stops writing to that stdout.
 */
function exitOnceWritten(code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), 2_000).unref();
}

main().catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`homefleet: ${message}\n`);
  process.exit(1);
});
