// The floor of `npm run bench:server`: a bare node:http + better-sqlite3 server, in its own process,
// that runs homefleet's SQL for each measured route and nothing else: no framework, no session, no
// Origin check, no validation, no audit, no log line. Its database is a page-for-page copy of the one
// homefleet serves, opened with the same pragmas (server/db/database.ts).
//   DB_PATH=... PORT=... node test/bench/floor-server.mjs
import http from 'node:http';
import { createRequire } from 'node:module';

const Database = createRequire(import.meta.url)('better-sqlite3');
const db = new Database(process.env.DB_PATH);
db.exec('PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');

const COLUMNS = 'vmid, name, state, stack, tailscale_ip, atlas, argus, semaphore, patchmon, tailscale, andromeda, hardware_acceleration, tags, created_at, updated_at';
const SEARCH = "(name LIKE @search ESCAPE '\\' OR CAST(vmid AS TEXT) LIKE @search ESCAPE '\\' OR stack LIKE @search ESCAPE '\\')";
// The statements homefleet's registry runs for these two lists (server/registry/repo.ts), read the same
// way: the bench checks that both servers answer them with the same bytes before it times anything.
const list = db.prepare(`SELECT ${COLUMNS} FROM instances ORDER BY updated_at DESC, id DESC`).raw(true);
const search = db.prepare(`SELECT ${COLUMNS} FROM instances WHERE ${SEARCH} ORDER BY +updated_at DESC, +id DESC`).raw(true);
// Raw rows shaped in JavaScript, as homefleet's registry reads them: a third less CPU than
// better-sqlite3's row objects, so the floor does it too.
// Each instance also says where it runs (`host`, `guest_status`, issue 27): one map lookup by vmid,
// as homefleet does, in a map that is empty here as there (no host reports in the benchmark).
const placements = new Map();
// And its tailnet IPv6 address (a read-only fact the Tailscale job keeps): one read of the table per
// list, as homefleet does, empty here as there.
const tailnetAll = db.prepare('SELECT vmid, ipv6 FROM tailnet_facts').raw(true);
let tailnet = new Map();
const shape = (r) => {
  const placed = placements.get(r[0]);
  return { vmid: r[0], name: r[1], state: r[2], stack: r[3], tailscale_ip: r[4], atlas: r[5], argus: r[6], semaphore: r[7],
    patchmon: r[8], tailscale: r[9], andromeda: r[10], hardware_acceleration: r[11], tags: r[12] === '' ? [] : r[12].split(','), created_at: r[13], updated_at: r[14],
    host: placed ? placed.host : null, guest_status: placed ? placed.guest_status : null, tailscale_ipv6: tailnet.get(r[0]) ?? null };
};

const insert = db.prepare(`INSERT INTO instances (${COLUMNS}) VALUES (@vmid, @name, @state, @stack, @tailscale_ip, @atlas, @argus,
  @semaphore, @patchmon, @tailscale, @andromeda, @hardware_acceleration, @tags, @created_at, @updated_at)`);
const history = db.prepare('INSERT INTO instance_history (instance_id, field, old_value, new_value, changed_at, changed_by) VALUES (?, ?, NULL, NULL, ?, ?)');
const FLAGS = { tailscale_ip: '', atlas: 0, argus: 0, semaphore: 0, patchmon: 0, tailscale: 0, andromeda: 0, hardware_acceleration: 0, tags: '' };

/** A create: the instance and its `created` history row, in one transaction. */
const create = db.transaction((row) => {
  const now = Date.now();
  const at = new Date(now).toISOString().slice(0, 19) + 'Z';
  const instance = { vmid: row.vmid, name: row.name, state: row.state, stack: row.stack, ...FLAGS, created_at: at, updated_at: at };
  const id = insert.run(instance).lastInsertRowid;
  history.run(id, 'created', new Date(now).toISOString(), 'bench');
  return instance;
});

/** An import: every instance replaced, and one `imported` history row each, in one transaction. */
const deleteHistory = db.prepare('DELETE FROM instance_history');
const deleteInstances = db.prepare('DELETE FROM instances');
const importedHistory = db.prepare("INSERT INTO instance_history (instance_id, field, old_value, new_value, changed_at, changed_by) SELECT id, 'imported', NULL, NULL, ?, 'import' FROM instances ORDER BY id");
const replace = db.transaction((instances) => {
  deleteHistory.run();
  deleteInstances.run();
  for (const row of instances) insert.run({ ...row, tags: (row.tags ?? []).join(',') });
  importedHistory.run(new Date().toISOString());
});

// As a Buffer: writing a 270 KB string to the socket costs ~20% more CPU than encoding it first (measured).
function send(res, status, value) {
  const body = Buffer.from(JSON.stringify(value));
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

http
  .createServer(async (req, res) => {
    const url = new URL(req.url, 'http://floor');
    if (req.method === 'GET' && url.pathname === '/api/health') return send(res, 200, { status: 'ok' });
    if (req.method === 'GET' && url.pathname === '/api/instances') {
      const term = url.searchParams.get('search');
      const rows = term ? search.all({ search: `%${term.replace(/[\\%_]/g, (c) => '\\' + c)}%` }) : list.all();
      tailnet = rows.length ? new Map(tailnetAll.all()) : new Map();
      return send(res, 200, rows.map(shape));
    }
    if (req.method === 'POST' && url.pathname === '/api/instances') return send(res, 201, create(JSON.parse(await readBody(req))));
    if (req.method === 'POST' && url.pathname === '/api/import') {
      const { instances } = JSON.parse(await readBody(req));
      replace(instances);
      return send(res, 200, { imported: instances.length });
    }
    send(res, 404, { error: 'not found' });
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
// Exit through process.exit, so a --cpu-prof profile is written (BENCH_CPU_PROF).
process.on('SIGTERM', () => process.exit(0));
