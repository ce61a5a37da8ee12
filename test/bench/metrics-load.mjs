// The load generator of the metrics benchmark, in a process of its own (forked by metrics.bench.ts,
// one command at a time over IPC), so no server shares its event loop with the client timing it.
// Only 127.0.0.1 servers the benchmark started are contacted; every loop is bounded.
import http from 'node:http';

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;

function send(agent, url, { method = 'GET', headers = {}, body }) {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { hostname: target.hostname, port: target.port, path: target.pathname + target.search, method, agent, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A heartbeat body of host `h` in round `r`: 50 guests, every number moving a little. */
function body(h, r, guests) {
  const wave = (k) => (Math.sin((r + k) / 7) + 1) / 2;
  return JSON.stringify({
    agent_version: '1.0.0',
    started_at: '2026-11-22T09:00:00Z',
    hostname: `pve${h}`,
    uptime_s: 1000 + r * 30,
    metrics: { cpu: Number((0.1 + 0.5 * wave(h)).toFixed(4)), mem_used: 8e9 + Math.round(wave(h + 1) * 4e9), mem_total: 68719476736, disk_used: 4e11 + r * 1000, disk_total: 1e12, load1: 1.25, net_rx_bytes: 1e9 + r * 3e6, net_tx_bytes: 5e8 + r * 1e6 },
    guests: Array.from({ length: guests }, (_, g) => ({
      vmid: 100 + g, name: `guest-${h}-${g}`, type: g % 2 ? 'lxc' : 'qemu', status: 'running',
      cpu: Number((0.02 + 0.3 * wave(g)).toFixed(4)), mem: 1e9 + Math.round(wave(g + h) * 1e9), maxmem: 4294967296, disk: 0, maxdisk: 34359738368, uptime_s: 86400 + r * 30, netin: 1e7 + r * 1e4 * g, netout: 5e6 + r * 5e3 * g,
    })),
  });
}

/**
 * `rounds` rounds of one heartbeat per host, a round starting every `everyMs` (time compressed from
 * 30 s), `concurrency` in flight; the latency of each, from sending to the whole answer.
 */
async function heartbeats({ url, tokens, rounds, everyMs, concurrency, guests, floor }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = [];
  const started = performance.now();
  for (let r = 0; r < rounds; r++) {
    const roundStart = performance.now();
    const bodies = tokens.map((_, h) => body(h, r, guests));
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < tokens.length) {
          const h = next++;
          const sent = performance.now();
          const status = await send(agent, url, { method: 'POST', headers: floor ? { 'x-host': String(h + 1) } : { authorization: `Bearer ${tokens[h]}` }, body: bodies[h] });
          latencies.push(performance.now() - sent);
          if (status !== 200) throw new Error(`heartbeat of host ${h}: status ${status}`);
        }
      }),
    );
    const wait = everyMs - (performance.now() - roundStart);
    if (wait > 0 && r < rounds - 1) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, seconds: (performance.now() - started) / 1000, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies.at(-1) };
}

/** `count` GETs of `url` one after another; their latencies. */
async function queries({ url, headers = {}, count }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = [];
  for (let i = 0; i < count; i++) {
    const sent = performance.now();
    const status = await send(agent, url, { headers });
    latencies.push(performance.now() - sent);
    if (status !== 200) throw new Error(`GET ${url}: status ${status}`);
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

const commands = { heartbeats, queries };
process.on('message', async ({ id, command, args }) => {
  try {
    process.send({ id, result: await commands[command](args) });
  } catch (err) {
    process.send({ id, error: String(err?.stack ?? err) });
  }
});
