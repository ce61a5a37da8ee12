import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Request lines wait until this many bytes of them are pending… */
const BATCH_BYTES = 4096;
/** …or this long after the first: a quiet server's lines still show at once to a person watching. */
const BATCH_MS = 100;

/** The request-line logger of each logger createLogger made (see requestLogger). */
const requestLoggers = new WeakMap<Logger, Logger>();

/** Batches holding lines stdout has not been handed yet: written, and stdout flushed, when the process exits. */
const waiting = new Set<() => void>();
let exitHooked = false;

/**
 * One JSON line per event on stdout. Request bodies, cookies and authorization headers
 * are never passed to the logger, and these paths are redacted in case one slips in.
 *
 * Lines go to pino's asynchronous stdout writer. The one line per request (requestLogger) is held back
 * and handed over in batches: writing each on its own cost a write on the thread pool and a wake-up of
 * the event loop per request. Every other line first hands over the batch, then itself, so lines keep
 * their order; on exit everything still held is written synchronously, the last line included.
 */
export function createLogger(level: string): Logger {
  const stdout = pino.destination({ dest: 1, sync: false });
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const release = () => {
    clearTimeout(timer);
    timer = undefined;
    waiting.delete(atExit);
    if (pending === '') return;
    stdout.write(pending);
    pending = '';
  };
  const atExit = () => {
    release();
    stdout.flushSync();
  };
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', () => {
      for (const write of waiting) write();
    });
  }
  const options: LoggerOptions = { level, base: undefined };
  const logger = pino(
    {
      ...options,
      redact: {
        paths: ['password', '*.password', 'token', '*.token', 'api_key', '*.api_key', 'api_token', '*.api_token', 'headers.cookie', 'headers.authorization'],
        censor: '[redacted]',
      },
    },
    {
      write(line: string) {
        release();
        stdout.write(line);
      },
    },
  );
  // The request line's four fields (method, path, status, ms) hold no secret: no redaction pass,
  // which costs five times the line itself.
  const requests = pino(options, {
    write(line: string) {
      pending += line;
      if (pending.length >= BATCH_BYTES) return release();
      if (timer) return;
      timer = setTimeout(release, BATCH_MS).unref();
      waiting.add(atExit);
    },
  });
  requestLoggers.set(logger, requests);
  return logger;
}

/** The logger for the per-request line: batched when `logger` came from createLogger, else a child of it without redaction. */
export function requestLogger(logger: Logger): Logger {
  return requestLoggers.get(logger) ?? logger.child({}, { redact: { paths: [] } });
}
