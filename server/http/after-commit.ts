import type { RequestHandler, Response } from 'express';
import type { Transactions } from '../db/tx.js';

type End = Response['end'];

/** What described the answer that is no longer true: its body, where it pointed, the cookie of a session that is not stored. */
const ABOUT_THE_ANSWER = ['content-length', 'content-type', 'content-disposition', 'content-encoding', 'etag', 'last-modified', 'location', 'set-cookie'];

/**
 * Group commit's other half (server/db/tx.ts): an answer is sent only once every change made in its
 * turn of the event loop has committed. `res.end` waits for the open group; a read waits too, so it
 * never shows what could still be lost. When the group's COMMIT fails, nothing of it is in the
 * database: an answer not yet started becomes a 500, one already streaming is cut off.
 */
export function answerAfterCommit({ whenCommitted }: Pick<Transactions, 'whenCommitted'>): RequestHandler {
  return (_req, res, next) => {
    const end = res.end;
    res.end = function (this: Response, ...args: unknown[]) {
      const waiting = whenCommitted((err) => {
        res.end = end;
        if (err === undefined) (end as (...a: unknown[]) => Response).apply(this, args);
        else if (res.headersSent) res.destroy();
        else {
          for (const name of ABOUT_THE_ANSWER) res.removeHeader(name);
          res.status(500).json({ error: 'internal error' });
        }
      });
      return waiting ? this : (end as (...a: unknown[]) => Response).apply(this, args);
    } as End;
    next();
  };
}

/** Methods that do not change anything by their meaning: they go ahead while writes are held. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * While another connection writes (an import, server/db/tx.ts `exclusive`), a request that may write
 * waits for it here, before its authentication, instead of failing on the lock: it is answered once
 * the import is in. Reads go on, and see the database as it was before the import until it commits.
 */
export function waitForWrites({ paused }: Pick<Transactions, 'paused'>): RequestHandler {
  return (req, _res, next) => {
    const held = READS.has(req.method) ? undefined : paused();
    if (!held) return next();
    void held.then(() => next());
  };
}
