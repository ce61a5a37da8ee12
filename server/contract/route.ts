/**
 * How a route of the API is declared (server/contract/routes/): its key is `METHOD /path`, and it says
 * which path parameters are ids, what query and JSON body it takes and what it answers. The server's
 * route table registers handlers by key and is typed by it (server/http/routes.ts), the dashboard's
 * `api()` is typed by it, and the API document is written from it. The types ride on plain data: the
 * map loads in the browser without zod. A query's or body's type is its zod schema's
 * (server/contract/inputs/, imported type-only here); the server binds that schema to the route, and
 * the binding fails to compile unless the schema reads exactly the declared type, so what is
 * documented is what is enforced.
 */

/** One answer of a route: its status, what it is, and the type of its JSON body (`undefined`: none). */
export interface Answer<T = unknown> {
  readonly status: number;
  readonly description: string;
  /** When the body is not JSON (`text/plain`, say). */
  readonly contentType?: string;
  /** Never set: carries the body's type. */
  readonly type?: T;
}

/** A query string or JSON body of type `T` as the server reads it (after its schema's transforms). */
export interface Input<T> {
  readonly input: true;
  /** Never set: carries the type. */
  readonly type?: T;
}

export interface RouteSpec {
  /** Path parameters that are ids: the route table parses them as integers (400 `invalid <name>`) before anything else. */
  readonly ids?: readonly string[];
  readonly query?: Input<unknown>;
  readonly body?: Input<unknown>;
  readonly answers: readonly Answer[];
}

export type RouteMap = Readonly<Record<string, RouteSpec>>;

export const answer = <T = undefined>(status: number, description: string, contentType?: string): Answer<NoInfer<T>> => ({
  status,
  description,
  ...(contentType ? { contentType } : {}),
});
export const input = <T>(): Input<T> => ({ input: true });
/** A route's declaration, kept literal so that its ids and types are known by key. */
export const route = <const S extends RouteSpec>(spec: S): S => spec;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;
type PathOf<K> = K extends `${Method} ${infer P}` ? P : never;
type IdsOf<S> = S extends { ids: readonly (infer I)[] } ? I : never;

/** The path parameters of a key: ids as numbers once parsed, the others as strings. */
export type ParamsOf<K extends string, S> = { [N in ParamNames<PathOf<K>>]: N extends IdsOf<S> ? number : string };
export type QueryOf<S> = S extends { query: Input<infer Q> } ? Q : undefined;
export type BodyOf<S> = S extends { body: Input<infer B> } ? B : undefined;
/** What the route answers: the union of its answers' bodies. */
export type AnswerOf<S> = S extends { answers: readonly (infer A)[] } ? (A extends Answer<infer T> ? T : never) : never;

export function splitKey(key: string): { method: Method; path: string } {
  const space = key.indexOf(' ');
  return { method: key.slice(0, space) as Method, path: key.slice(space + 1) };
}
