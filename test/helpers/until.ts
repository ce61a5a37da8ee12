import fs from 'node:fs';
import net from 'node:net';

/**
 * Polls `read` until it answers something truthy (every `everyMs`), and answers that; throws "timed out
 * waiting for <what>" after `ms`. For what a test waits on from outside: an agent's report, an
 * operation's end, a live page.
 */
export async function until<T>(what: string, read: () => Promise<T | undefined | false>, ms = 30_000, everyMs = 100): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * A TCP port free on 127.0.0.1 now, for a server a test starts with PORT set and restarts on the same
 * port. It lies below the kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), so that
 * no server another test file starts with PORT=0, and no outgoing connection, can be handed it while
 * the server is down between a stop and a restart (which once made a restart fail in a full run).
 */
export async function freePort(): Promise<number> {
  let low = 32768;
  try {
    low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // not Linux: the usual range
  }
  const from = Math.max(1024, Math.min(20_000, low - 2000));
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = from + Math.floor(Math.random() * (low - from));
    if (await listens(port)) return port;
  }
  throw new Error(`no free port between ${from} and ${low}`);
}

function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}
