import net from 'node:net';
import type { NetworkInterfaceInfo } from 'node:os';

/** 127.0.0.0/8, ::1 and localhost: binds that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return net.isIPv4(h) && h.startsWith('127.');
}

const isWildcard = (host: string) => ['0.0.0.0', '::', '[::]', ''].includes(host);

/**
 * The names a self-signed certificate must cover: the machine's hostname, `localhost`, 127.0.0.1,
 * every address the server binds (for a wildcard bind: every interface address of the machine;
 * IPv6 ones too for `::`), and the configured extra names. Sorted, without duplicates.
 */
export function certificateNames(options: {
  host: string;
  hostname: string;
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>;
  extra?: string[];
}): string[] {
  const names = new Set<string>(['localhost', '127.0.0.1']);
  if (options.hostname && /^[A-Za-z0-9.-]+$/.test(options.hostname)) names.add(options.hostname.toLowerCase());
  if (isWildcard(options.host)) {
    const v6 = options.host.includes(':');
    for (const list of Object.values(options.interfaces)) {
      for (const a of list ?? []) {
        // Link-local IPv6 addresses need a zone id, which neither URLs nor certificates can carry.
        if (a.family === 'IPv4' || (v6 && a.family === 'IPv6' && !a.address.toLowerCase().startsWith('fe80'))) names.add(a.address.toLowerCase());
      }
    }
  } else {
    names.add(options.host.replace(/^\[|\]$/g, '').toLowerCase());
  }
  for (const name of options.extra ?? []) names.add(name.replace(/^\[|\]$/g, '').toLowerCase());
  return [...names].sort();
}

/** `https://<name>:<port>` for each name, IPv6 addresses in brackets; wildcard names are left out. */
export function httpsOrigins(names: readonly string[], port: number): string[] {
  return names.filter((n) => !n.includes('*')).map((n) => `https://${net.isIPv6(n) ? `[${n}]` : n}:${port}`);
}
