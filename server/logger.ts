import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * One JSON line per event on stdout. Request bodies, cookies and authorization headers
 * are never passed to the logger, and these paths are redacted in case one slips in.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: ['password', '*.password', 'token', '*.token', 'api_key', '*.api_key', 'api_token', '*.api_token', 'headers.cookie', 'headers.authorization'],
      censor: '[redacted]',
    },
  });
}
