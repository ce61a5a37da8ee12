import type { Request, Response } from 'express';
import { parseCookies } from './origin.js';

export const SECURE_COOKIE = '__Host-homefleet_session';
export const DEV_COOKIE = 'homefleet_session_dev';
const ABSOLUTE_SECONDS = 12 * 60 * 60;

/** Over HTTPS only the `__Host-` cookie counts, so a cookie planted over plain HTTP cannot stand in for it. */
function cookieName(req: Request): string {
  return req.secure ? SECURE_COOKIE : DEV_COOKIE;
}

export function readSessionToken(req: Request): string | undefined {
  const value = parseCookies(req.get('cookie')).get(cookieName(req));
  return value && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}

export function setSessionCookie(req: Request, res: Response, token: string): void {
  const secure = req.secure ? '; Secure' : '';
  res.append('Set-Cookie', `${cookieName(req)}=${token}; Path=/; Max-Age=${ABSOLUTE_SECONDS}; HttpOnly${secure}; SameSite=Lax`);
}

export function clearSessionCookie(req: Request, res: Response): void {
  const secure = req.secure ? '; Secure' : '';
  res.append('Set-Cookie', `${cookieName(req)}=; Path=/; Max-Age=0; HttpOnly${secure}; SameSite=Lax`);
}
