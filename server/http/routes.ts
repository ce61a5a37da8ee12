import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { ZodType } from 'zod';
import type { Capability } from '../contract/access.js';
import { splitKey, type Answer, type AnswerOf, type BodyOf, type ParamsOf, type QueryOf, type RouteMap } from '../contract/route.js';
import { ROUTES, type Routes } from '../contract/routes/index.js';
import { jsonBody, refuseUnreadableCharset } from './body.js';
import { runInRequest } from './request-context.js';
import { RouteGroup } from './route-match.js';
import { parseId, parseWith, type Same } from './validate.js';

/** What a route needs: a capability (a signed-in person with a role), or `public` / `machine` (no person). */
export type Access = Capability | 'public' | 'machine';

/** The agents' own credentials (PRODUCT.md), each taken only by the agent route of its kind. */
export const AGENT_CREDENTIALS = ['enrollment', 'host', 'receipt'] as const;
export type AgentCredential = (typeof AGENT_CREDENTIALS)[number];

/**
 * How a request proves who it is: a browser session, a personal API token (`hfp_`), or an agent's
 * enrollment (`hfe_`), host (`hfh_`) or receipt (`hfr_`) token.
 */
export type Credential = 'session' | 'token' | AgentCredential;

/**
 * The credentials a route takes when it does not say: a session or a token on capability routes,
 * except `self` and `users.manage` ("Tokens cannot use /api/auth/* password or session routes, user
 * management routes"), so a leaked token cannot mint more tokens, change a password or touch
 * accounts; none on public and machine routes.
 */
export function defaultCredentials(access: Access): readonly Credential[] {
  if (access === 'public' || access === 'machine') return [];
  return access === 'self' || access === 'users.manage' ? ['session'] : ['session', 'token'];
}

/** How a route is served: who may call it and how its body is read. What it takes and answers is in its declaration (server/contract/routes/). */
export interface ServeOptions {
  access: Access;
  /**
   * The credentials the route takes (defaultCredentials when absent). `['session']` on a capability
   * route: a token gets 401. An agent kind on a machine route: only that kind of agent token.
   */
  credentials?: readonly Credential[];
  /** Largest JSON body accepted (default 1 MiB); `false` when the route reads the body itself. */
  bodyLimit?: string | false;
  /** The JSON body's bytes (a Buffer) for the handler to decode (server/http/json-text.ts): a body too large to parse in one turn. */
  rawBody?: true;
  /** Route-specific checks that run after authentication and before the body is read. */
  before?: RequestHandler[];
  /** `false`: a request here is not activity, so it does not refresh the session's idle time (the event stream). */
  activity?: false;
  /**
   * The success status (default: the documented response's, else 200). The table sets it before the
   * handler runs, so the change log's `request` entry, written inside the handler's transaction,
   * records it without the handler setting it first.
   */
  status?: number;
}

/**
 * A schema that reads exactly `T` (as a client sends it, or as the server reads it after the
 * schema's defaults and transforms), else a type naming the mismatch, so the binding fails to compile.
 */
type Reading<S, T> = S extends ZodType<infer O, infer I> ? (Same<O, T> extends true ? S : Same<I, T> extends true ? S : { 'the schema does not read the declared type': T }) : never;
type Output<S> = S extends ZodType<infer O> ? O : undefined;

/**
 * The schemas that validate what a route's declaration says it takes: a query schema exactly when it
 * declares a query, a body schema exactly when it declares a body. Input schemas are `z.lazy(() => ...)`,
 * built at their first use: registering a route must not build them, as building them all at module
 * evaluation was a tenth of the server's start. `parse`: the route parses its body its own way (the
 * heartbeat, a slice of guests at a time), which its tests hold to the same answers as the schema's.
 * `answer`: a schema of the JSON answer for the API document, held to the declared answer type (which
 * the handler's return type is held to).
 */
export type Bindings<S, QS, BS, AS = undefined> = { answer?: Reading<AS, AnswerOf<S>> } & (QueryOf<S> extends undefined ? { query?: never } : { query: Reading<QS, QueryOf<S>> }) &
  (BodyOf<S> extends undefined ? { body?: never; parse?: never } : { body: Reading<BS, BodyOf<S>>; parse?: (value: unknown) => Promise<Output<BS>> });

/** What the handler is given besides the request: the ids parsed, the query and the body as their schemas read them. */
export interface RouteInput<K extends string, S, QS = undefined, BS = undefined> {
  params: ParamsOf<K, S>;
  query: Output<QS>;
  body: Output<BS>;
}
/** A handler answers the declared type, or sends the answer itself through `res` and returns nothing. */
export type RouteHandler<K extends string, S, QS = undefined, BS = undefined> = (
  req: Request,
  res: Response,
  input: RouteInput<K, S, QS, BS>,
) => AnswerOf<S> | void | Promise<AnswerOf<S> | void>;

export interface RouteRecord {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  access: Access;
  /** What the route takes, defaults applied: the authentication step and the API document read it. */
  credentials: readonly Credential[];
  /** The path parameters that are ids (integers). */
  ids: readonly string[];
  /** The schemas that validate the query and the body, for the API document (server/openapi). */
  body?: ZodType;
  query?: ZodType;
  answers: readonly Answer[];
  /** The schema of the (first) JSON answer, when the route gives one for the API document. */
  answer?: ZodType;
  /** Set (false) on routes whose requests do not refresh the session's idle time. */
  activity?: false;
}

/** Turns a route's declared access and credentials into the steps that enforce them (server/access/authenticate.ts). */
export type Authenticate = (route: RouteRecord) => RequestHandler[];

/**
 * The one way routes are added: by their key in the route map (server/contract/routes/), which types
 * the handler. Each declares its access and credentials; authentication enforces them before the
 * body is read; ids, the query and the body are parsed and validated, in that order, before the
 * handler; a handler that returns a value has it sent as JSON.
 */
export class RouteTable<M extends RouteMap = Routes> {
  readonly router: Router = express.Router();
  readonly records: RouteRecord[] = [];
  /** The routes added since the last `use`: one layer of the router. */
  private group: RouteGroup | undefined;

  /** `map`: the app's route map; a test may give a map of its own routes. */
  constructor(
    private readonly authenticate: Authenticate,
    private readonly map: M = ROUTES as unknown as M,
  ) {}

  on<K extends keyof M & string, QS = undefined, BS = undefined, AS = undefined>(key: K, options: ServeOptions & Bindings<M[K], QS, BS, AS>, handler: RouteHandler<K, M[K], QS, BS>): void {
    const { method, path } = splitKey(key);
    const spec: { ids?: readonly string[]; answers: readonly Answer[] } = this.map[key]!;
    const bound = options as ServeOptions & { query?: ZodType; body?: ZodType; answer?: ZodType; parse?: (value: unknown) => Promise<unknown> };
    const record: RouteRecord = {
      method,
      path,
      access: options.access,
      credentials: options.credentials ?? defaultCredentials(options.access),
      ids: spec.ids ?? [],
      ...(bound.body ? { body: bound.body } : {}),
      ...(bound.query ? { query: bound.query } : {}),
      answers: spec.answers,
      ...(bound.answer ? { answer: bound.answer } : {}),
      ...(options.activity === false ? { activity: false as const } : {}),
    };
    this.records.push(record);
    const readsBody = options.bodyLimit !== false && method !== 'GET';
    const chain: RequestHandler[] = [...this.authenticate(record), ...(readsBody ? [refuseUnreadableCharset] : []), ...(options.before ?? [])];
    if (readsBody) chain.push(jsonBody(options.bodyLimit || '1mb', { raw: options.rawBody === true }));
    const { ids } = record;
    const { query, body, parse } = bound;
    const status = options.status ?? successStatus(spec.answers);
    chain.push(async (req, res) => {
      const params: Record<string, unknown> = { ...req.params };
      for (const name of ids) params[name] = parseId(req.params[name] as string | undefined, name);
      const input = {
        params,
        query: query ? parseWith(query, req.query) : undefined,
        body: body ? (parse ? await parse(req.body) : parseWith(body, req.body)) : undefined,
      } as RouteInput<K, M[K], QS, BS>;
      if (body) req.body = input.body;
      // The handler runs in its request's context (who acts, the request id) with its success status
      // set: the change log reads both there. Set here, after the body is read, as the body parser's
      // stream events would not carry the context.
      res.status(status);
      const result = await runInRequest(req, res, () => handler(req, res, input));
      if (result !== undefined && !res.headersSent) res.json(result);
    });
    if (!this.group) {
      this.group = new RouteGroup();
      this.router.use(this.group.dispatch);
    }
    this.group.add(method, path, chain);
  }

  /** A step for every request under `prefix`, run before the routes added after it (and after those added before). */
  use(prefix: string, handler: RequestHandler): void {
    this.group = undefined;
    this.router.use(prefix, handler);
  }
}

/** The first success status the route declares, else 200. */
function successStatus(answers: readonly Answer[]): number {
  return answers.find((a) => a.status >= 200 && a.status < 300)?.status ?? 200;
}
