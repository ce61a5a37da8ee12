import type { Request, Response } from 'express';
import type { Config } from '../config.js';
import { parseCookies, plainHttpLoginAllowed } from './origin.js';

export const SECURE_COOKIE = '__Host-homefleet_session';
export const DEV_COOKIE = 'homefleet_session_dev';
const ABSOLUTE_SECONDS = 12 * 60 * 60;

type CookieConfig = Pick<Config, 'authAllowHttp'>;

/**
 * The session cookie is the sign-in cookie of kind `session` (see below). Over HTTPS only the
 * `__Host-` cookie counts, so a cookie planted over plain HTTP cannot stand in for it. The development
 * cookie exists only where plain-HTTP login is allowed (FLEET_AUTH_ALLOW_HTTP and a loopback host
 * name): elsewhere a plain-HTTP request has no session cookie at all.
 */
export const readSessionToken = (req: Request, config: CookieConfig): string | undefined => readStepCookie(req, config, 'session');

export const setSessionCookie = (req: Request, res: Response, token: string, config: CookieConfig): void =>
  setStepCookie(req, res, config, 'session', token, ABSOLUTE_SECONDS);

export const clearSessionCookie = (req: Request, res: Response, config: CookieConfig): void => clearStepCookie(req, res, config, 'session');

/**
 * A cookie of signing in: the session, or a short-lived step (the second-factor wait, an OpenID
 * Connect flow). `__Host-homefleet_<kind>` over HTTPS, `homefleet_<kind>_dev` on loopback plain HTTP,
 * none elsewhere. SameSite=Lax: the provider's redirect back is a top-level GET.
 */
function stepCookieName(req: Request, config: CookieConfig, kind: string): string | undefined {
  if (req.secure) return `__Host-homefleet_${kind}`;
  return plainHttpLoginAllowed(config, req) ? `homefleet_${kind}_dev` : undefined;
}

export function setStepCookie(req: Request, res: Response, config: CookieConfig, kind: string, value: string, maxAgeSeconds: number): void {
  const name = stepCookieName(req, config, kind);
  if (!name) return;
  res.append('Set-Cookie', `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly${req.secure ? '; Secure' : ''}; SameSite=Lax`);
}

export function readStepCookie(req: Request, config: CookieConfig, kind: string): string | undefined {
  const name = stepCookieName(req, config, kind);
  const value = name && parseCookies(req.get('cookie')).get(name);
  return value && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}

/** A sealed step cookie's text (server/access/sealed.ts): base64url, a dot, the 43-character MAC; under the 4 KiB a browser keeps. */
export function readSealedCookie(req: Request, config: CookieConfig, kind: string): string | undefined {
  const name = stepCookieName(req, config, kind);
  const value = name && parseCookies(req.get('cookie')).get(name);
  return value && value.length <= 3800 && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}

export function clearStepCookie(req: Request, res: Response, config: CookieConfig, kind: string): void {
  setStepCookie(req, res, config, kind, '', 0);
}
