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
