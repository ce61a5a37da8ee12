import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * One route's path, split at `/`: a literal segment, a `:name` parameter (one non-empty segment), or
 * a trailing `{*name}` (the rest of the path, possibly nothing): the forms the route map uses.
 */
type Segment = { literal: string } | { param: string };

interface Compiled {
  segments: Segment[];
  /** The path ends in `{*name}`. */
  rest: boolean;
  chain: RequestHandler[];
}

/**
 * The routes of a RouteTable, matched as Express 5's router matches them (case-insensitive, one
 * trailing slash allowed, parameters percent-decoded, a malformed one a 400, HEAD served by GET, the
 * first registered match wins), in one layer instead of one per route: Express tried each route's
 * regular expression in turn (~150 of them for a request near the end of the table), and compiling
 * them at start made path-to-regexp's lexer hot enough for V8's optimizing compiler, 4 MB of idle RSS.
 * Routes are grouped by method and segment count, so a request compares a handful of literals.
 */
export class RouteGroup {
  private readonly exact = new Map<string, Compiled[]>();
  private readonly rest = new Map<string, Compiled[]>();
  /** `METHOD /path` of each route, in the order added (what the route table test lists). */
  readonly served: string[] = [];

  add(method: string, path: string, chain: RequestHandler[]): void {
    this.served.push(`${method} ${path}`);
    const parts = path.split('/').slice(1);
    const last = parts[parts.length - 1] ?? '';
    const rest = /^\{\*\w+\}$/.test(last);
    if (rest) parts.pop();
    if (parts.some((part) => (part.startsWith(':') ? !/^:\w+$/.test(part) : /[:*{}()?+]/.test(part)))) throw new Error(`route path not understood: ${path}`);
    const segments = parts.map((part): Segment => (part.startsWith(':') ? { param: part.slice(1) } : { literal: part.toLowerCase() }));
    const compiled = { segments, rest, chain };
    const key = rest ? method : `${method} ${segments.length}`;
    const table = rest ? this.rest : this.exact;
    table.set(key, [...(table.get(key) ?? []), compiled]);
  }

  /** The router's layer; `group` leads back here. */
  readonly dispatch = Object.assign(
    (req: Request, res: Response, next: NextFunction): void => {
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      let parts = req.path.split('/').slice(1);
      // One trailing slash is the same path (Express's non-strict routing); `/` itself is no segment.
      if (parts.length > 0 && parts[parts.length - 1] === '') parts = parts.slice(0, -1);
      const found = this.match(method, parts);
      if (!found) {
        // Express decoded the parameters of every route whose path matched, whatever its method: a
        // malformed one is a 400 even where no route of this method is.
        if (req.path.includes('%')) for (const other of this.methods()) if (other !== method) this.decodeOf(this.match(other, parts));
        return next();
      }
      req.params = this.decodeOf(found);
      runChain(found.route.chain, req, res, next);
    },
    { group: this as RouteGroup },
  );

  private match(method: string, parts: string[]): { route: Compiled; values: string[] } | undefined {
    return this.find(this.exact.get(`${method} ${parts.length}`), parts, false) ?? this.find(this.rest.get(method), parts, true);
  }

  private methods(): Set<string> {
    return new Set(this.served.map((s) => s.slice(0, s.indexOf(' '))));
  }

  private decodeOf(found: { route: Compiled; values: string[] } | undefined): Record<string, string> {
    return found ? decodeParams(found.route.segments, found.values) : {};
  }

  private find(routes: Compiled[] | undefined, parts: string[], rest: boolean): { route: Compiled; values: string[] } | undefined {
    if (!routes) return undefined;
    for (const route of routes) {
      const { segments } = route;
      if (rest ? parts.length < segments.length : parts.length !== segments.length) continue;
      let values: string[] | undefined;
      let matches = true;
      for (let i = 0; i < segments.length; i++) {
        const segment = segments[i]!;
        const part = parts[i]!;
        if ('literal' in segment) {
          if (part !== segment.literal && part.toLowerCase() !== segment.literal) {
            matches = false;
            break;
          }
        } else if (part === '') {
          matches = false;
          break;
        } else (values ??= []).push(part);
      }
      if (matches) return { route, values: values ?? [] };
    }
    return undefined;
  }
}

/** The parameters by name, percent-decoded; a malformed one throws a URIError with status 400, as Express's router does. */
function decodeParams(segments: Segment[], values: string[]): Record<string, string> {
  const params: Record<string, string> = {};
  let n = 0;
  for (const segment of segments) {
    if (!('param' in segment)) continue;
    const value = values[n++]!;
    try {
      params[segment.param] = value.includes('%') ? decodeURIComponent(value) : value;
    } catch (err) {
      throw Object.assign(err as URIError, { status: 400 });
    }
  }
  return params;
}

/** Runs the route's handlers in turn, each moving on with `next()`; an error (thrown or rejected) goes to the app's error handler. */
function runChain(chain: RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let i = 0;
  const step = (err?: unknown): void => {
    if (err !== undefined && err !== null) return done(err);
    const handler = chain[i++];
    if (!handler) return done();
    try {
      const result: unknown = handler(req, res, step);
      if (result instanceof Promise) result.catch((e: unknown) => done(e ?? new Error('rejected')));
    } catch (e) {
      done(e);
    }
  };
  step();
}
