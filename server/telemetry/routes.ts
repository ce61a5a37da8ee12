import type { RequestHandler } from 'express';
import * as z from 'zod';
import type { AppContext } from '../context.js';
import type { TelemetryAccepted, TelemetryEvent } from '../contract/telemetry.js';
import { HttpError, serviceUnavailable, unsupportedMediaType, validationFailed } from '../errors.js';
import { jsonBody } from '../http/body.js';
import type { RouteTable } from '../http/routes.js';
import { PageQuery } from '../contract/inputs/page.js';
import { bearerCredential, secretsEqual } from '../http/secrets.js';
import { parseWith, shared } from '../http/validate.js';
import { isoMillis } from '../time.js';
import type { TelemetryRepo } from './repo.js';

const Event = shared(() => z.record(z.string(), z.unknown(), { error: 'must be a JSON object or an array of objects' }));
const TelemetryBody = z.lazy(() =>
  z.union([Event(), z.array(Event()).min(1, 'must hold at least one event')], {
    error: 'must be a JSON object or an array of objects',
  }),
);

/** Deeper than this, an event is refused: storing it (JSON.stringify) would overflow the stack, a 500. */
export const MAX_EVENT_DEPTH = 64;

/** Nesting depth of a parsed JSON value, without recursion (the value itself may be 100,000 levels deep). */
function tooDeep(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The token only from these two headers: never a cookie, query parameter or JSON field. */
function presentedToken(header: (name: string) => string | undefined): string | undefined {
  return bearerCredential(header('authorization')) || header('x-fleet-telemetry-token') || undefined;
}

/** Decided from the headers alone, before the body is read, parsed or recorded. */
function telemetryGate(ctx: AppContext): RequestHandler {
  return (req, _res, next) => {
    const expected = ctx.config.telemetryToken;
    if (!expected) return next(serviceUnavailable('telemetry ingestion disabled'));
    const token = presentedToken((name) => req.get(name));
    if (!token || !secretsEqual(token, expected)) return next(new HttpError(401, { error: 'invalid telemetry token' }));
    if (!req.is('application/json')) return next(unsupportedMediaType('content type must be application/json'));
    next();
  };
}

export function registerTelemetryRoutes(routes: RouteTable, ctx: AppContext, repo: TelemetryRepo): void {
  // Not strict: a valid JSON body that is not an object (`42`) reaches the schema and is told what
  // is wrong, instead of the strict parser's "malformed JSON body".
  const body = jsonBody('1mb', { strict: false });
  routes.on('POST /api/telemetry', { access: 'machine', before: [telemetryGate(ctx), body], bodyLimit: false }, (req, res): TelemetryAccepted => {
    const body = parseWith(TelemetryBody, req.body);
    if (tooDeep(body, MAX_EVENT_DEPTH + 1)) throw validationFailed([{ field: 'body', message: `must not be nested more than ${MAX_EVENT_DEPTH} levels deep` }]);
    const events = Array.isArray(body) ? body : [body];
    repo.add(isoMillis(ctx.clock.now()), events);
    res.status(202);
    return { accepted: events.length };
  });

  routes.on('GET /api/telemetry', { access: 'diagnostics.read', query: PageQuery }, (_req, _res, { query }): TelemetryEvent[] => repo.list(query.limit, query.before));
}
