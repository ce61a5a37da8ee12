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

/** A TCP port free on 127.0.0.1 now (the kernel's pick), for a server a test starts with PORT set. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
