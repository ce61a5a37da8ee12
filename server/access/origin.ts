import type { Request, RequestHandler } from 'express';
import type { Config } from '../config.js';
import { HttpError } from '../errors.js';
import { httpsOrigins } from '../tls/names.js';

export const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The origins a state-changing request may come from: the configured public origin, or, only when
 * plain-HTTP loopback login is allowed, the loopback origins of the port the request arrived on.
 */
export function allowedOrigins(config: Pick<Config, 'publicOrigin' | 'authAllowHttp' | 'tlsNames'>, port: number | undefined): string[] {
  if (config.publicOrigin) return [config.publicOrigin];
  // Built-in HTTPS (server/tls): exactly https://<name>:<port> for each name the certificate covers.
  if (config.tlsNames) return port === undefined ? [] : httpsOrigins(config.tlsNames, port);
  if (!config.authAllowHttp || port === undefined) return [];
  return [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`];
}

export function originAllowed(config: Config, req: Request): boolean {
  const origin = req.get('origin');
  return origin !== undefined && allowedOrigins(config, req.socket.localPort).includes(origin);
}

/** Cross-site request forgery stops here: a browser always sends Origin on a cross-site POST. */
export function checkOrigin(config: Config, req: Request): void {
  if (!SAFE_METHODS.has(req.method) && !originAllowed(config, req)) throw new HttpError(403, { error: 'origin mismatch' });
}

/** checkOrigin as a route's step (login, setup). */
export function requireOrigin(config: Config): RequestHandler {
  return (req, _res, next) => {
    checkOrigin(config, req);
    next();
  };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** "Plain-HTTP browser login is allowed only when FLEET_AUTH_ALLOW_HTTP is true and the hostname is localhost, 127.0.0.1 or ::1." */
export function plainHttpLoginAllowed(config: Pick<Config, 'authAllowHttp'>, req: Request): boolean {
  return config.authAllowHttp && LOOPBACK_NAMES.has(req.hostname);
}

/** Passwords travel over HTTPS, or over plain HTTP only to a loopback name when FLEET_AUTH_ALLOW_HTTP=true. */
export function requireSecureTransport(config: Config): RequestHandler {
  return (req, _res, next) => {
    if (req.secure || plainHttpLoginAllowed(config, req)) return next();
    next(new HttpError(403, { error: 'https required' }));
  };
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}
