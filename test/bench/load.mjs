// The load generator of `npm run bench:server`, in a process of its own (forked by server.bench.mjs,
// which sends it one command at a time over IPC): neither server shares an event loop or a garbage
// collector with the client that times it. The client is node:http over a keep-alive agent (llhttp
// parses, bodies are counted and dropped, never decoded), a fresh agent per round so no round reuses
// a socket the server may be closing. Every answer's status is checked: a failing server cannot look fast.
import http from 'node:http';

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;

/**
 * One request; resolves with the status, the body's size, and the body itself when `keep` is set. A
 * request on a reused keep-alive socket that the server had just closed fails with ECONNRESET; it
 * is sent once more on a new socket, as Node's documentation advises (`retried` counts them).
 */
async function send(agent, url, options) {
  try {
    return await sendOnce(agent, url, options);
  } catch (err) {
    if (err.code !== 'ECONNRESET' || !err.reusedSocket) throw err;
    return { ...(await sendOnce(agent, url, options)), retried: 1 };
  }
}

function sendOnce(agent, url, { method = 'GET', headers = {}, body, keep = false }) {
  const { hostname, port, pathname, search } = typeof url === 'string' ? new URL(url) : url;
  const options = { hostname, port, path: pathname + search, method, agent, headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } };
  return new Promise((resolve, reject) => {
    const req = http.request(options, (res) => {
      let size = 0;
      const chunks = [];
      res.on('data', (chunk) => {
        size += chunk.length;
        if (keep) chunks.push(chunk);
      });
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode, size, body: keep ? Buffer.concat(chunks).toString('utf8') : undefined }));
    });
    req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    req.end(body);
  });
}

/** The body of the n-th create: a new vmid each time, so every create writes. */
const createBody = (vmid) => `{"vmid":${vmid},"name":"bench-${vmid}","state":"deployed","stack":"development"}`;

/**
 * `connections` requests in flight for `seconds`, each connection sending its next request as soon
 * as the last answer has been read. With `createFrom`, each request is a create of the next vmid.
 */
async function rate({ url, method = 'GET', headers = {}, body, createFrom, connections, seconds, expect }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(url);
  const latencies = [];
  let vmid = createFrom;
  let bytes = 0;
  let retried = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  const loop = async () => {
    while (performance.now() < until) {
      const sent = performance.now();
      const res = await send(agent, target, { method, headers, body: vmid === undefined ? body : createBody(vmid++) });
      latencies.push(performance.now() - sent);
      if (res.status !== expect) throw new Error(`${method} ${url}: status ${res.status}, expected ${expect}`);
      bytes += res.size;
      retried += res.retried ?? 0;
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, loop));
  } finally {
    agent.destroy();
  }
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, perSecond: latencies.length / elapsed, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), bytes, retried, nextVmid: vmid };
}

/** Reads on one connection for `seconds`, while (with `logins`) each account signs in over and over. */
async function readsDuringLogins({ read, logins }) {
  let going = true;
  let count = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const loops = (logins?.users ?? []).map(async ({ username, password }) => {
    const body = JSON.stringify({ username, password });
    while (going) {
      const res = await send(agent, logins.url, { method: 'POST', headers: { 'content-type': 'application/json', origin: logins.origin }, body });
      if (res.status !== 200) throw new Error(`login of ${username}: status ${res.status}`);
      count++;
    }
  });
  try {
    return { ...(await rate({ ...read, connections: 1 })), logins: count };
  } finally {
    going = false;
    await Promise.all(loops);
    agent.destroy();
  }
}

let importBody;
/** The `count`-instance backup document, built once: names, states, stacks and flags vary. */
function backupDocument(count) {
  if (importBody?.count === count) return importBody.buffer;
  const instances = Array.from({ length: count }, (_, i) => ({
    vmid: i + 1,
    name: `vm-${i + 1}`,
    state: ['deployed', 'testing', 'degraded'][i % 3],
    stack: i % 4 ? 'development' : 'production',
    tailscale_ip: i % 2 ? '' : `100.64.${(i >> 8) & 255}.${i & 255}`,
    atlas: 0, argus: 1, semaphore: 0, patchmon: i % 2, tailscale: i % 2 ? 0 : 1, andromeda: 0, hardware_acceleration: 0,
    created_at: '2026-11-22T10:00:00Z',
    updated_at: '2026-11-22T10:00:00Z',
  }));
  importBody = { count, buffer: Buffer.from(JSON.stringify({ version: 3, exported_at: new Date().toISOString(), instances })) };
  return importBody.buffer;
}

/** One import of the backup document, timed from the first byte sent to the last byte of the answer. */
async function importOnce({ url, headers, count }) {
  const body = backupDocument(count);
  const agent = new http.Agent({ keepAlive: false });
  const started = performance.now();
  const res = await send(agent, url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, keep: true });
  const ms = performance.now() - started;
  agent.destroy();
  return { ms, status: res.status, body: res.body, bytes: body.length };
}

/** One GET whose body is returned, to compare what the two servers answer. */
async function fetchBody({ url, headers }) {
  const agent = new http.Agent();
  const res = await send(agent, url, { headers, keep: true });
  agent.destroy();
  return res;
}

const commands = { rate, readsDuringLogins, importOnce, fetchBody };
process.on('message', async ({ id, command, args }) => {
  try {
    process.send({ id, result: await commands[command](args) });
  } catch (err) {
    process.send({ id, error: err.stack ?? String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
