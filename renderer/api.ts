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

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
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
  if (res.ok) return data as T;

  if (res.status === 401 && !OWN_401.includes(path) && location.pathname !== '/login') navigate(signInUrl(), { replace: true });
  if (res.status === 403 && data?.error === 'password change required' && !location.pathname.startsWith('/password')) {
    navigate(`/password?next=${encodeURIComponent(currentUrl())}`, { replace: true });
  }
  // FLEET_REQUIRE_2FA: nothing but setting up a second factor until one is.
  if (res.status === 403 && data?.error === 'second factor required' && !location.pathname.startsWith('/account')) {
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
    typeof data?.error === 'string' ? sentence(data.error) : fieldText ? `Please fix: ${fieldText}.` : (PLAIN_MESSAGES[res.status] ?? `The server answered ${res.status}.`);
  const retry = Number(res.headers.get('retry-after'));
  return Promise.reject(new ApiError(res.status, message, fields, Number.isFinite(retry) && retry > 0 ? retry : undefined));
}

/** The text to show for any thrown value: never a stack trace. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return 'Something went wrong. Reload the page and try again.';
}
