// The floor of the metrics benchmark: a bare node:http + better-sqlite3 server in its own process that,
// for a heartbeat, parses the body, writes the host's facts and inserts the same samples homefleet
// stores as one plain row per subject (no authentication, validation, roll-up or compression), and for
// a chart query reads the rows of one host and subject over the range and answers them as JSON.
//   DB_PATH=... PORT=... node test/bench/metrics-floor.mjs
import http from 'node:http';
import { createRequire } from 'node:module';

const Database = createRequire(import.meta.url)('better-sqlite3');
const db = new Database(process.env.DB_PATH);
db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
db.exec(`CREATE TABLE IF NOT EXISTS facts (id INTEGER PRIMARY KEY, hostname TEXT, agent_version TEXT, last_heartbeat_at INTEGER, body_size INTEGER) STRICT;
CREATE TABLE IF NOT EXISTS samples (host_id INTEGER, vmid INTEGER, t INTEGER, a REAL, b REAL, c REAL, d REAL, e REAL, f REAL, g REAL, h REAL, PRIMARY KEY (host_id, vmid, t)) STRICT, WITHOUT ROWID;`);

const facts = db.prepare('INSERT INTO facts (id, hostname, agent_version, last_heartbeat_at, body_size) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET hostname = excluded.hostname, last_heartbeat_at = excluded.last_heartbeat_at');
const sample = db.prepare('INSERT OR REPLACE INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
const range = db.prepare('SELECT t, a FROM samples WHERE host_id = ? AND vmid = ? AND t >= ? AND t < ? ORDER BY t').raw(true);
const n = (v) => (v === undefined ? null : Number(v));
const beat = db.transaction((id, b, size) => {
  const now = Date.now();
  facts.run(id, b.hostname, b.agent_version, now, size);
  const t = Math.floor(now / 1000);
  const m = b.metrics ?? {};
  sample.run(id, 0, t, n(m.cpu), n(m.mem_used), n(m.mem_total), n(m.disk_used), n(m.disk_total), n(m.load1), n(m.net_rx_bytes), n(m.net_tx_bytes));
  for (const g of b.guests) sample.run(id, g.vmid, t, n(g.cpu), n(g.mem), n(g.maxmem), n(g.disk), n(g.maxdisk), n(g.uptime_s), n(g.netin), n(g.netout));
});

const server = http.createServer({ keepAlive: true }, (req, res) => {
  const url = new URL(req.url, 'http://x');
  if (req.method === 'POST') {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      beat(Number(req.headers['x-host']), JSON.parse(text), text.length);
      const out = '{"heartbeat_interval_s":30,"commands":[]}';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length }).end(out);
    });
    return;
  }
  const from = Math.floor(Date.parse(url.searchParams.get('from')) / 1000);
  const rows = range.all(1, 0, from, Math.floor(Date.now() / 1000) + 1);
  const out = JSON.stringify({ series: { cpu: rows } });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) }).end(out);
});
server.keepAliveTimeout = 120_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
