import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

/** What a request id may look like: a proxy's UUID or hex id, never spaces, quotes or line breaks. */
const WELL_FORMED = /^[A-Za-z0-9._:+=/-]{1,128}$/;

/**
 * Every request gets an id: the caller's X-Request-Id (a proxy's, say) when it is well formed, else
 * a new UUID. It is echoed in the answer and written in the request's log line and in the audit entry
 * of the change it made, so the three can be found from one another.
 */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const given = req.get('x-request-id');
    const id = given !== undefined && WELL_FORMED.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}
