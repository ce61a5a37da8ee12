import type { RouteAnswer, RouteBody, RouteKey, RouteParams, RouteQuery } from '../server/contract/routes/index';
import { sentence } from './format';
import { currentUrl, navigate } from './router';

/** An API failure as the page shows it: the server's message, and its field errors keyed by field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: Record<string, string> = {},
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

const PLAIN_MESSAGES: Record<number, string> = {
  401: 'Your session has ended. Sign in again.',
  403: 'You are not allowed to do that.',
  404: 'Not found.',
  413: 'That is too large for the server.',
  429: 'Too many attempts. Try again later.',
};

/** Where the 401 handler sends people: the sign-in page, remembering the page they were on. */
export function signInUrl(from: string = currentUrl()): string {
  return from.startsWith('/login') || from === '/' ? '/login' : `/login?next=${encodeURIComponent(from)}`;
}

/** Calls with their own meaning for 401 (wrong password), where a redirect to sign-in would be wrong. */
const OWN_401 = [
  '/api/auth/login',
  '/api/auth/login/totp',
  '/api/auth/login/passkey',
  '/api/auth/login/passkey/options',
  '/api/auth/password',
  '/api/auth/session',
  '/api/auth/passkeys/verify',
  '/api/auth/passkeys/register/options',
  '/api/auth/totp',
];

type Scalar = string | number | boolean;
/** A query as the page gives it: the declared parameters, numbers and flags written out as text; a list repeats its parameter (`tag=a&tag=b`). */
type QueryInput<Q> = { [K in keyof Q]?: Scalar | readonly Scalar[] | undefined };
/**
 * A body as the page gives it: the declared fields with their types; a field the server fills in
 * when absent (a default) may be left out, so none is required here and the server's 400 names a
 * missing one.
 */
type BodyInput<B> = B extends readonly unknown[] ? B : B extends object ? { [F in keyof B]?: B[F] } : B;
/** What a call gives: the path's parameters, the query and the body its declaration names, nothing else. */
export type CallInput<K extends RouteKey> = ([keyof RouteParams<K>] extends [never] ? { params?: never } : { params: { [P in keyof RouteParams<K>]: Scalar } }) &
  (RouteQuery<K> extends undefined ? { query?: never } : { query?: QueryInput<RouteQuery<K>> }) &
  (RouteBody<K> extends undefined ? { body?: never; raw?: string } : { body: BodyInput<RouteBody<K>>; raw?: never });
type Args<K extends RouteKey> = [keyof RouteParams<K>] extends [never] ? (RouteBody<K> extends undefined ? [input?: CallInput<K>] : [input: CallInput<K>]) : [input: CallInput<K>];

/** `/api/hosts/:id` with `{id: 7}` → `/api/hosts/7`, and the query, empty values left out. */
export function pathOf(template: string, params: Record<string, Scalar> = {}, query: Record<string, Scalar | readonly Scalar[] | undefined> = {}): string {
  const path = template.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(String(params[name])));
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) if (one !== undefined && one !== '') search.append(name, String(one));
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * Calls a route of the API by its key in the route map (server/contract/routes/): the parameters,
 * query and body it takes and the answer it gives are the map's. `raw`: a body already in JSON text,
 * sent as it is, for a route that reads its body itself (a backup file being imported).
 */
export async function api<K extends RouteKey>(key: K, ...[input]: Args<K>): Promise<RouteAnswer<K>> {
  const space = key.indexOf(' ');
  const given = (input ?? {}) as { params?: Record<string, Scalar>; query?: Record<string, Scalar | readonly Scalar[] | undefined>; body?: unknown; raw?: string };
  return request(key.slice(0, space), pathOf(key.slice(space + 1), given.params, given.query), given.raw ?? given.body) as Promise<RouteAnswer<K>>;
}

async function request(method: string, path: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The server could not be reached. Check that homefleet is running.');
  }
  const isJson = res.headers.get('content-type')?.includes('application/json');
  const data: any = isJson ? await res.json().catch(() => undefined) : undefined;
  if (res.ok) return data;

  return Promise.reject(refusal(res.status, path, data, res.headers.get('retry-after')));
}

/**
 * A refused call as the page shows it (and where it sends people: sign-in on 401, the password or
 * second-factor page when the server asks for one). Also for calls made without `api()`: an upload.
 */
export function refusal(status: number, path: string, data: any, retryAfter: string | null): ApiError {
  if (status === 401 && !OWN_401.includes(path.split('?')[0]!) && location.pathname !== '/login') navigate(signInUrl(), { replace: true });
  if (status === 403 && data?.error === 'password change required' && !location.pathname.startsWith('/password')) {
    navigate(`/password?next=${encodeURIComponent(currentUrl())}`, { replace: true });
  }
  // FLEET_REQUIRE_2FA: nothing but setting up a second factor until one is.
  if (status === 403 && data?.error === 'second factor required' && !location.pathname.startsWith('/account')) {
    navigate(`/account?next=${encodeURIComponent(currentUrl())}`, { replace: true });
  }
  const fields: Record<string, string> = {};
  if (Array.isArray(data?.errors)) {
    for (const item of data.errors) if (item && typeof item.field === 'string') fields[item.field] ||= String(item.message);
  }
  const fieldText = Object.entries(fields)
    .map(([field, message]) => `${field} ${message}`)
    .join('; ');
  const message =
    typeof data?.error === 'string' ? sentence(data.error) : fieldText ? `Please fix: ${fieldText}.` : (PLAIN_MESSAGES[status] ?? `The server answered ${status}.`);
  const retry = Number(retryAfter);
  return new ApiError(status, message, fields, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

/** The text to show for any thrown value: never a stack trace. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return 'Something went wrong. Reload the page and try again.';
}
