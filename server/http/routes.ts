import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { ZodType } from 'zod';
import type { Capability } from '../contract/access.js';
import { jsonBody, refuseUnreadableCharset } from './body.js';
import { runInRequest } from './request-context.js';
import { parseWith } from './validate.js';

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

export interface RouteOptions<B> {
  access: Access;
  /**
   * The credentials the route takes (defaultCredentials when absent). `['session']` on a capability
   * route: a token gets 401. An agent kind on a machine route: only that kind of agent token.
   */
  credentials?: readonly Credential[];
  /**
   * Schema of the JSON body; the handler sees the parsed value as `req.body`. Feature schemas are
   * `z.lazy(() => ...)`, built at their first use: registering a route must not build them, as
   * building them all at module evaluation was a tenth of the server's start.
   */
  body?: ZodType<B>;
  /** Schema of the query string; the handler sees the parsed value as `req.query`. */
  query?: ZodType;
  /** For the API document only: the body a handler validates itself (a merged update, say). */
  documentedBody?: ZodType;
  /** For the API document only: the query a handler reads itself. */
  documentedQuery?: ZodType;
  /** For the API document only: the success status and the shape of its JSON answer (or several). */
  documentedResponse?: DocumentedResponse | DocumentedResponse[];
  /** Largest JSON body accepted (default 1 MiB); `false` when the route reads the body itself. */
  bodyLimit?: string | false;
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

/** A success answer for the API document; `contentType` when it is not JSON (then `schema` describes that body, if given). */
export interface DocumentedResponse {
  status: number;
  schema?: ZodType;
  description?: string;
  contentType?: string;
}

export type Handler<B> = (req: Request<Record<string, string>, unknown, B>, res: Response) => unknown;

export interface RouteRecord {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  access: Access;
  /** What the route takes, defaults applied: the authentication step and the API document read it. */
  credentials: readonly Credential[];
  /** The declared body and query schemas, kept for the API document (server/openapi). */
  body?: ZodType;
  query?: ZodType;
  response?: DocumentedResponse | DocumentedResponse[];
  /** Set (false) on routes whose requests do not refresh the session's idle time. */
  activity?: false;
}

/** Turns a route's declared access and credentials into the steps that enforce them (server/access/authenticate.ts). */
export type Authenticate = (route: RouteRecord) => RequestHandler[];

/**
 * The one way routes are added. Each declares its access and credentials; authentication enforces
 * them before the body is read; the body is parsed and validated before the handler; a handler that
 * returns a value has it sent as JSON.
 */
export class RouteTable {
  readonly router: Router = express.Router();
  readonly records: RouteRecord[] = [];

  constructor(private readonly authenticate: Authenticate) {}

  get<B = unknown>(path: string, options: RouteOptions<B>, handler: Handler<B>): void {
    this.add('GET', path, options, handler);
  }
  post<B = unknown>(path: string, options: RouteOptions<B>, handler: Handler<B>): void {
    this.add('POST', path, options, handler);
  }
  put<B = unknown>(path: string, options: RouteOptions<B>, handler: Handler<B>): void {
    this.add('PUT', path, options, handler);
  }
  patch<B = unknown>(path: string, options: RouteOptions<B>, handler: Handler<B>): void {
    this.add('PATCH', path, options, handler);
  }
  delete<B = unknown>(path: string, options: RouteOptions<B>, handler: Handler<B>): void {
    this.add('DELETE', path, options, handler);
  }

  private add<B>(method: RouteRecord['method'], path: string, options: RouteOptions<B>, handler: Handler<B>): void {
    const record: RouteRecord = {
      method,
      path,
      access: options.access,
      credentials: options.credentials ?? defaultCredentials(options.access),
      body: options.body ?? options.documentedBody,
      query: options.query ?? options.documentedQuery,
      response: options.documentedResponse,
      ...(options.activity === false ? { activity: false as const } : {}),
    };
    this.records.push(record);
    const readsBody = options.bodyLimit !== false && method !== 'GET';
    const chain: RequestHandler[] = [...this.authenticate(record), ...(readsBody ? [refuseUnreadableCharset] : []), ...(options.before ?? [])];
    if (readsBody) chain.push(jsonBody(options.bodyLimit || '1mb'));
    if (options.query) {
      const schema = options.query;
      chain.push((req, _res, next) => {
        // Express 5's req.query is a getter; the parsed value shadows it for this request.
        Object.defineProperty(req, 'query', { value: parseWith(schema, req.query), configurable: true, enumerable: true });
        next();
      });
    }
    if (options.body) {
      const schema = options.body;
      chain.push((req, _res, next) => {
        req.body = parseWith(schema, req.body);
        next();
      });
    }
    const status = options.status ?? successStatus(options.documentedResponse);
    // The handler runs in its request's context (who acts, the request id): the change log reads it there.
    // Set here, after the body is read, as the body parser's stream events would not carry it.
    chain.push(async (req, res) => {
      res.status(status);
      const result = await runInRequest(req, res, () => handler(req as Request<Record<string, string>, unknown, B>, res));
      if (result !== undefined && !res.headersSent) res.json(result);
    });
    this.router[method.toLowerCase() as 'get'](path, ...chain);
  }
}

function successStatus(documented: DocumentedResponse | DocumentedResponse[] | undefined): number {
  const first = Array.isArray(documented) ? documented[0] : documented;
  return first && first.status >= 200 && first.status < 300 ? first.status : 200;
}
