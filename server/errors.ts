import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import type { FieldError } from './contract/common.js';
import { isBusy } from './db/busy.js';

export type { FieldError };

/** An error a client caused or should see; the one error middleware turns it into JSON. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body.error === 'string' ? body.error : `HTTP ${status}`);
  }
}

const error = (status: number) => (message: string) => new HttpError(status, { error: message });

export const badRequest = error(400);
export const unauthorized = error(401);
export const forbidden = error(403);
export const notFound = error(404);
export const conflict = error(409);
export const unsupportedMediaType = error(415);
export const unprocessable = error(422);
export const serviceUnavailable = error(503);
/** The one body of every refused token (personal, enrollment, host, receipt), so a caller learns nothing about which tokens exist. */
export const invalidToken = () => unauthorized('invalid token');
export const validationFailed = (errors: FieldError[]) => new HttpError(400, { errors });
export const tooManyRequests = (retryAfterSeconds: number) =>
  new HttpError(429, { error: 'too many attempts, try again later' }, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

/** Errors raised by Express's body parser carry a `type`; each maps to a client error, never a 500. */
const bodyParserErrors: Record<string, [number, string]> = {
  'entity.parse.failed': [400, 'malformed JSON body'],
  'entity.too.large': [413, 'request body too large'],
  'encoding.unsupported': [415, 'unsupported content encoding'],
  'charset.unsupported': [415, 'unsupported charset'],
  'request.aborted': [400, 'request aborted'],
  'request.size.invalid': [400, 'request size did not match content length'],
  'stream.encoding.set': [500, 'internal error'],
};

/**
 * Errors from Express and its parsers that carry an HTTP status below 500 (`status` or `statusCode`)
 * are the client's: they keep that status. Express's path-parameter decoding throws a URIError
 * with status 400 for `/api/instances/%ff`; a body whose Content-Encoding does not decode fails
 * in zlib with a 400. Never a status guessed from message text.
 */
function clientError(err: unknown): [number, string] | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown; errno?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status === undefined || !Number.isInteger(status) || status < 400 || status > 499) return undefined;
  if (err instanceof URIError) return [status, 'malformed percent-encoding in the path'];
  // zlib's errors (gzip, deflate, brotli) carry a numeric errno.
  if (typeof e.errno === 'number') return [status, 'request body does not match its Content-Encoding'];
  return [status, e.expose === true && typeof e.message === 'string' && e.message.length <= 200 ? e.message : 'bad request'];
}

/** Registered after every route: typed errors become their JSON body, anything else a logged 500. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    if (err instanceof HttpError) {
      res.set(err.headers).status(err.status).json(err.body);
      return;
    }
    const mapped = typeof err?.type === 'string' ? bodyParserErrors[err.type] : undefined;
    if (mapped && mapped[0] < 500) {
      res.status(mapped[0]).json({ error: mapped[1] });
      return;
    }
    const client = clientError(err);
    if (client) {
      res.status(client[0]).json({ error: client[1] });
      return;
    }
    // Another connection holds the write lock (an import being written, the recovery command): the
    // same request a moment later goes through. Logged, as it tells which writes raced an import.
    if (isBusy(err)) {
      logger.warn({ method: req.method, path: req.path }, 'database busy: answered 503');
      res.set('Retry-After', '2').status(503).json({ error: 'the database is busy with another write, try again in a moment' });
      return;
    }
    logger.error({ err: { message: err?.message, stack: err?.stack }, method: req.method, path: req.path }, 'unhandled error');
    res.status(500).json({ error: 'internal error' });
  };
}
