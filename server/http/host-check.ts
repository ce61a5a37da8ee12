import type { RequestHandler } from 'express';
import os from 'node:os';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';

/**
 * The host name of a `Host` header, lower case, without port, brackets or a final dot; undefined
 * for anything that is not `name[:port]`, `IPv4[:port]` or `[IPv6][:port]`.
 */
export function hostNameOf(header: string): string | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::\d{1,5})?$/.exec(header);
  if (!m) return undefined;
  return (m[1] ?? m[2]!).toLowerCase().replace(/\.$/, '');
}

/** Whether `name` is one of `names`; a `*.example.lan` entry (a certificate's wildcard) matches one label. */
export function nameMatches(name: string, names: Iterable<string>): boolean {
  for (const entry of names) {
    const n = entry.toLowerCase().replace(/^\[|\]$/g, '');
    if (n === name) return true;
    if (!n.startsWith('*.')) continue;
    const suffix = n.slice(1);
    const label = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && label !== '' && !label.includes('.')) return true;
  }
  return false;
}

const isLoopbackName = (name: string) => name === 'localhost' || name === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
const isWildcardBind = (host: string) => ['0.0.0.0', '::', '[::]', ''].includes(host);

export interface HostCheckDeps {
  hostname?: () => string;
  interfaces?: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;
  now?: () => number;
}

/**
 * The names this server answers to: loopback names, the configured origin's host, the certificate's
 * names (which follow a renewal), FLEET_ALLOWED_HOSTS, the bind address and, on a non-loopback bind,
 * the machine's hostname (and `<hostname>.local`) and, on a wildcard bind, every interface address.
 * Interfaces are read again on a miss, at most every 10 s, so a new DHCP address is found.
 */
export function createHostNames(config: Pick<Config, 'host' | 'publicOrigin' | 'allowedHosts' | 'tlsNames'>, deps: HostCheckDeps = {}) {
  const hostname = deps.hostname ?? os.hostname;
  const interfaces = deps.interfaces ?? os.networkInterfaces;
  const now = deps.now ?? Date.now;
  const fixed = new Set<string>(config.allowedHosts.map((n) => n.toLowerCase().replace(/^\[|\]$/g, '')));
  if (config.publicOrigin) fixed.add(new URL(config.publicOrigin).hostname.replace(/^\[|\]$/g, ''));
  const bind = config.host.replace(/^\[|\]$/g, '').toLowerCase();
  const local = !isLoopbackName(bind);
  if (local && !isWildcardBind(config.host)) fixed.add(bind);
  let machine = new Set<string>();
  let readAt = -Infinity;

  function readMachine(): void {
    readAt = now();
    const names = new Set<string>();
    const name = hostname().toLowerCase();
    if (name) names.add(name).add(`${name}.local`);
    if (isWildcardBind(config.host)) {
      for (const list of Object.values(interfaces())) for (const a of list ?? []) names.add(a.address.toLowerCase());
    }
    machine = names;
  }

  return (name: string): boolean => {
    if (isLoopbackName(name) || fixed.has(name) || nameMatches(name, config.tlsNames ?? [])) return true;
    if (!local) return false;
    if (machine.has(name)) return true;
    if (now() - readAt < 10_000) return false;
    readMachine();
    return machine.has(name);
  };
}

const MAX_LOGGED = 100;

/**
 * 421 Misdirected Request for a `Host` that is not one of the server's names: the address the
 * installer and install commands name comes from it (when no public URL is set), so a forged Host
 * must not get an answer (a DNS-rebinding page neither). Only the Host header counts, never
 * X-Forwarded-Host: a proxy in front either passes the public name, which FLEET_PUBLIC_URL declares,
 * or its own upstream address, a loopback name. A request without Host (HTTP/1.0) names nothing and passes.
 */
export function hostCheck(config: Config, logger: Logger, deps?: HostCheckDeps): RequestHandler {
  const allowed = createHostNames(config, deps);
  const logged = new Set<string>();
  return (req, res, next) => {
    const header = req.headers.host;
    if (header === undefined) return next();
    const name = hostNameOf(header);
    if (name !== undefined && allowed(name)) return next();
    if (logged.size < MAX_LOGGED && !logged.has(header)) {
      logged.add(header);
      logger.warn({ host: header.slice(0, 200) }, 'refused a request for a host name this server does not answer to (421); if it is one of its names, add it to FLEET_ALLOWED_HOSTS');
    }
    res.status(421).set('Cache-Control', 'no-store');
    if (/^\/api(\/|$)/.test(req.path)) res.json({ error: 'misdirected request' });
    else res.type('text/plain').send('misdirected request: this server does not answer to that host name\n');
  };
}
