const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** An error with body-parser's `type`, which the error middleware (server/errors.ts) answers as body-parser's own. */
export function bodyError(status: number, type: string, message: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, type, expose: true });
}

/**
 * A JSON body's bytes as body-parser reads them: a UTF-8 byte order mark is skipped, an empty body
 * is {}, and when `strict` the top level must be an object or an array. Throws bodyError (400).
 * Kept apart from body.ts (and Express) for the import helper, which parses the body it is sent.
 */
export function decodeJsonBody(body: Buffer, strict = true): unknown {
  const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  if (body.length === start) return {};
  let first = start;
  while (first < body.length && WHITESPACE.has(body[first]!)) first++;
  if (strict && body[first] !== 0x7b && body[first] !== 0x5b) throw bodyError(400, 'entity.parse.failed', 'JSON body must be an object or an array');
  try {
    return JSON.parse(body.toString('utf8', start));
  } catch {
    throw bodyError(400, 'entity.parse.failed', 'malformed JSON body');
  }
}
