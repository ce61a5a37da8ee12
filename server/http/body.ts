import express, { type RequestHandler } from 'express';
import { unsupportedMediaType } from '../errors.js';
import { charsetRefusal } from './charset.js';
import { bodyError, decodeJsonBody } from './json-text.js';

const PLAIN_JSON = /^application\/json(?:[ \t]*;[ \t]*charset=(?:utf-8|"utf-8"))?$/i;

/**
 * With a `verify` hook, body-parser collects the raw bytes and decodes them afterwards, inside its
 * try: a decoder that throws then fails that one request (400) instead of throwing in the request
 * stream's `data` handler, where nothing catches it and the process ends. charsetRefusal already
 * lets through only the charsets the server bundle carries; this keeps a mistake there from
 * costing more than one request.
 */
const decodeAfterReading = () => undefined;

/**
 * 415 for a body no reader here would take (a charset other than UTF-8, a Content-Type that does not
 * parse), decided from the header alone: the route table runs it before a route's own `before` checks,
 * so a request that will be refused unread costs nothing else (a heartbeat slot, say).
 */
export const refuseUnreadableCharset: RequestHandler = (req, _res, next) => {
  const type = req.headers['content-type'];
  const refusal = type === undefined || PLAIN_JSON.test(type) ? undefined : charsetRefusal(type);
  next(refusal ? unsupportedMediaType(refusal) : undefined);
};

/**
 * express.json({ limit, strict }) with a fast path for what browsers and scripts send:
 * `application/json` (UTF-8), not compressed, with a Content-Length within the limit. That body is
 * read and parsed here with body-parser's rules (an empty body is {}, when strict the top level must
 * be an object or array, a wrong length or an aborted upload is an error with body-parser's `type`);
 * other charsets are refused (415) before anything is read, and the rest (compressed or chunked
 * bodies, other media types) goes to express.json itself. `raw`: the body's bytes are left to the
 * route to decode (decodeJsonBody), as a Buffer, or undefined for another media type.
 */
export function jsonBody(limit: string, { strict = true, raw = false }: { strict?: boolean; raw?: boolean } = {}): RequestHandler {
  // Made on first use: most routes never see a body off the fast path, and a parser per route was
  // a measurable part of the start.
  let fallback: RequestHandler | undefined;
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
      const refusal = charsetRefusal(type);
      if (refusal) next(unsupportedMediaType(refusal));
      else (fallback ??= raw ? express.raw({ type: 'application/json', limit }) : express.json({ limit, strict, verify: decodeAfterReading }))(req, res, next);
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
      if (raw) {
        req.body = body;
        next();
        return;
      }
      try {
        req.body = decodeJsonBody(body, strict);
      } catch (err) {
        next(err);
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

/** express.urlencoded (flat fields, as the setup page posts them), refusing charsets other than UTF-8 and ISO-8859-1 (415) before anything is read. */
export function formBody(limit: string, parameterLimit: number): RequestHandler {
  // Made on the first form: body-parser is loaded then, not at start (build.mjs, bodyParsersOnFirstUse).
  let parse: RequestHandler | undefined;
  return (req, res, next) => {
    const refusal = charsetRefusal(req.headers['content-type']);
    if (refusal) next(unsupportedMediaType(refusal));
    else (parse ??= express.urlencoded({ extended: false, limit, parameterLimit, verify: decodeAfterReading }))(req, res, next);
  };
}

/** '16kb', '1mb', '64mb' (as the route table writes them) in bytes. */
export function parseLimit(limit: string): number {
  const match = /^(\d+)(b|kb|mb)$/i.exec(limit);
  if (!match) throw new TypeError(`body limit ${limit} is not like 16kb or 1mb`);
  return Number(match[1]) * { b: 1, kb: 1024, mb: 1024 * 1024 }[match[2]!.toLowerCase() as 'b' | 'kb' | 'mb'];
}
