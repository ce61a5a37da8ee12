import express, { type RequestHandler } from 'express';

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const PLAIN_JSON = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

function bodyError(status: number, type: string, message: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, type, expose: true });
}

/**
 * express.json({ limit }) with a fast path for what browsers and scripts send: `application/json`
 * (UTF-8), not compressed, with a Content-Length within the limit. That body is read and parsed
 * here with body-parser's rules (an empty body is {}, the top level must be an object or array, a wrong
 * length or an aborted upload is an error with body-parser's `type`); everything else (other
 * charsets, compressed or chunked bodies, other media types) goes to express.json itself.
 */
export function jsonBody(limit: string): RequestHandler {
  const fallback = express.json({ limit });
  const limitBytes = parseLimit(limit);
  return (req, res, next) => {
    const headers = req.headers;
    const type = headers['content-type'];
    const declared = headers['content-length'];
    const encoding = headers['content-encoding'];
    if (
      type === undefined ||
      !PLAIN_JSON.test(type) ||
      declared === undefined ||
      !/^\d{1,15}$/.test(declared) ||
      headers['transfer-encoding'] !== undefined ||
      (encoding !== undefined && encoding.toLowerCase() !== 'identity')
    ) {
      fallback(req, res, next);
      return;
    }
    const length = Number(declared);
    if (length > limitBytes) {
      next(bodyError(413, 'entity.too.large', 'request entity too large'));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', finish);
      if (err) {
        req.resume();
        next(err);
        return;
      }
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
      // A UTF-8 byte order mark is skipped, as body-parser's decoder does.
      const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
      if (body.length === start) {
        req.body = {};
        next();
        return;
      }
      let first = start;
      while (first < body.length && WHITESPACE.has(body[first]!)) first++;
      if (body[first] !== 0x7b && body[first] !== 0x5b) {
        next(bodyError(400, 'entity.parse.failed', 'JSON body must be an object or an array'));
        return;
      }
      try {
        req.body = JSON.parse(body.toString('utf8', start));
      } catch {
        next(bodyError(400, 'entity.parse.failed', 'malformed JSON body'));
        return;
      }
      next();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > length) finish(bodyError(400, 'request.size.invalid', 'request size did not match content length'));
      else chunks.push(chunk);
    };
    const onEnd = () => finish(received === length ? undefined : bodyError(400, 'request.size.invalid', 'request size did not match content length'));
    const onAborted = () => finish(bodyError(400, 'request.aborted', 'request aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', finish);
  };
}

/** '16kb', '1mb', '64mb' (as the route table writes them) in bytes. */
export function parseLimit(limit: string): number {
  const match = /^(\d+)(b|kb|mb)$/i.exec(limit);
  if (!match) throw new TypeError(`body limit ${limit} is not like 16kb or 1mb`);
  return Number(match[1]) * { b: 1, kb: 1024, mb: 1024 * 1024 }[match[2]!.toLowerCase() as 'b' | 'kb' | 'mb'];
}
