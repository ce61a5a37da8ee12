import { expandHostPattern } from './host-pattern.js';

/**
 * Host names of an Ansible INI inventory. Hosts are the first word of each line in a plain
 * `[group]` section or before any section; `[group:vars]` and `[group:children]` list
 * variables and group names, not hosts. `host ansible_host=10.0.0.5` is the host `host`;
 * `host:2222` is `host`; ranges are expanded. Names are returned once each, in order.
 */
export function parseIniInventory(text: string): string[] {
  const hosts = new Set<string>();
  let inHostSection = true;
  for (const raw of text.split(/\r?\n/)) {
    const line = stripComment(raw).trim();
    if (line === '') continue;
    const section = /^\[([^\]]*)\]$/.exec(line);
    if (section) {
      const name = section[1]!.trim();
      inHostSection = !/:(vars|children)$/.test(name);
      continue;
    }
    if (!inHostSection) continue;
    const first = line.split(/\s+/)[0]!;
    if (first.includes('=')) continue; // a stray variable line, not a host
    for (const host of expandHostPattern(withoutPort(first))) hosts.add(host);
  }
  return [...hosts];
}

/** `#` and `;` start a comment at the beginning of a line or after whitespace. */
function stripComment(line: string): string {
  const match = /(^|\s)[#;]/.exec(line);
  return match ? line.slice(0, match.index) : line;
}

/** `db.example.com:5309` → `db.example.com`; brackets of a range are left alone. */
function withoutPort(host: string): string {
  return host.replace(/:\d+$/, '');
}
