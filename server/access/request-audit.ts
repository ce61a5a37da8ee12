import type { Request, Response } from 'express';
import type { RequestAudit } from '../http/locals.js';
import type { Logger } from '../logger.js';
import type { AuditLog } from './audit.js';

/** What a `request` row is about, from a request's route parameters: "instance 102", "user 5". */
export type AuditTarget = (params: Record<string, string>) => string | null;

/**
 * What a `request` audit entry is about, from the route's first path parameter and the word
 * before it: `/api/instances/:vmid` → "instance 102", `/api/users/:id/reset-password` → "user 5".
 * Worked out once per route, so a request only fills in the value.
 */
export function auditTargetOf(path: string): AuditTarget | undefined {
  const match = /\/([a-z-]+)\/:(\w+)/.exec(path);
  if (!match) return undefined;
  const noun = match[1]!.replace(/ies$/, 'y').replace(/s$/, '');
  const param = match[2]!;
  return (params) => (params[param] === undefined ? null : `${noun} ${params[param]!.slice(0, 64)}`);
}

/**
 * The `request` audit row of a 2xx management write, for the cookie and the token path alike. A
 * handler whose service takes it (res.locals.requestAudit) writes it inside the transaction of its
 * change, so the row commits with the change or not at all; otherwise it is written once the answer
 * is sent. A handler that wrote its own entry (user.create, token.create, host.*) sets
 * res.locals.audited, and no generic row is written beside it. `extra` joins the detail (the token).
 */
export function auditRequest(
  audit: AuditLog,
  logger: Logger,
  req: Request,
  res: Response,
  actor: string,
  targetOf: AuditTarget | undefined,
  extra?: Record<string, unknown>,
): void {
  let written = false;
  const write: RequestAudit = (about = {}) => {
    written = true;
    audit.write({
      actor,
      action: 'request',
      target: about.target ?? targetOf?.(req.params as Record<string, string>) ?? null,
      ip: req.ip ?? null,
      detail: { method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, ...res.locals.auditDetail, ...about.detail, ...extra },
    });
  };
  const due = () => !written && !res.locals.audited && res.statusCode >= 200 && res.statusCode <= 299;
  res.locals.requestAudit = (about) => {
    if (due()) write(about);
  };
  res.on('finish', () => {
    if (!due()) return;
    try {
      write();
    } catch (err) {
      logger.error({ err: { message: (err as Error).message } }, 'audit write failed');
    }
  });
}
