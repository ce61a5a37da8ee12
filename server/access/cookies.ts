import type { Request, Response } from 'express';
import type { Config } from '../config.js';
import { parseCookies, plainHttpLoginAllowed } from './origin.js';

export const SECURE_COOKIE = '__Host-homefleet_session';
export const DEV_COOKIE = 'homefleet_session_dev';
const ABSOLUTE_SECONDS = 12 * 60 * 60;

type CookieConfig = Pick<Config, 'authAllowHttp'>;

/**
 * Over HTTPS only the `__Host-` cookie counts, so a cookie planted over plain HTTP cannot stand in
 * for it. The development cookie exists only where plain-HTTP login is allowed (FLEET_AUTH_ALLOW_HTTP
 * and a loopback host name): elsewhere a plain-HTTP request has no session cookie at all.
 */
function cookieName(req: Request, config: CookieConfig): string | undefined {
  if (req.secure) return SECURE_COOKIE;
  return plainHttpLoginAllowed(config, req) ? DEV_COOKIE : undefined;
}

export function readSessionToken(req: Request, config: CookieConfig): string | undefined {
  const name = cookieName(req, config);
  const value = name && parseCookies(req.get('cookie')).get(name);
  return value && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}

export function setSessionCookie(req: Request, res: Response, token: string, config: CookieConfig): void {
  const name = cookieName(req, config);
  if (!name) return;
  const secure = req.secure ? '; Secure' : '';
  res.append('Set-Cookie', `${name}=${token}; Path=/; Max-Age=${ABSOLUTE_SECONDS}; HttpOnly${secure}; SameSite=Lax`);
}

export function clearSessionCookie(req: Request, res: Response, config: CookieConfig): void {
  const name = cookieName(req, config);
  if (!name) return;
  const secure = req.secure ? '; Secure' : '';
  res.append('Set-Cookie', `${name}=; Path=/; Max-Age=0; HttpOnly${secure}; SameSite=Lax`);
}

/**
 * A short-lived cookie of a sign-in step (the second-factor wait, an OpenID Connect flow), named
 * like the session's: `__Host-homefleet_<kind>` over HTTPS, `homefleet_<kind>_dev` on loopback
 * plain HTTP, none elsewhere. SameSite=Lax: the provider's redirect back is a top-level GET.
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

export function clearStepCookie(req: Request, res: Response, config: CookieConfig, kind: string): void {
  setStepCookie(req, res, config, kind, '', 0);
}
