// The load client of the time-travel benchmark, in a process of its own (forked by time-travel.bench.ts,
// one command over IPC), so the client timing the server shares no event loop with it. node:http over
// one keep-alive socket, requests one at a time: each latency is one answer's whole cost. Only the
// 127.0.0.1 server the benchmark started is contacted; every loop is bounded.
import http from 'node:http';

function get(agent, url, cookie) {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = performance.now();
    const req = http.request({ hostname: target.hostname, port: target.port, path: target.pathname + target.search, agent, headers: { cookie, accept: 'application/json' } }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ ms: performance.now() - sent, status: res.statusCode, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * `rounds` rounds, each sending every path once in turn (so a slow moment of the machine falls on all
 * of them alike); each path's latencies, sorted, and the number of instances its last answer held.
 */
async function measure({ base, paths, cookie, rounds }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = paths.map(() => []);
  const counts = paths.map(() => 0);
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [i, path] of paths.entries()) {
        const { ms, status, body } = await get(agent, base + path, cookie);
        if (status !== 200) throw new Error(`GET ${path}: status ${status}: ${body.toString('utf8').slice(0, 200)}`);
        latencies[i].push(ms);
        if (r === rounds - 1) counts[i] = JSON.parse(body.toString('utf8')).length;
      }
    }
  } finally {
    agent.destroy();
  }
  return { latencies: latencies.map((l) => l.sort((a, b) => a - b)), counts };
}

process.on('message', async ({ id, args }) => {
  try {
    process.send({ id, result: await measure(args) });
  } catch (err) {
    process.send({ id, error: String(err?.stack ?? err) });
  }
});
