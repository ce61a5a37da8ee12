import { buffer } from 'node:stream/consumers';
import { createAuditLog } from './audit.js';
import { runHelper } from './builtin.js';
import { backupSourcesOn } from './backup-sources.js';
import type { HelperMessage, ServerMessage } from './backup/import-process.js';
import { createBackupService, type ImportPlan } from './backup/service.js';
import { createDataContext } from './context.js';
import { openRetained } from './db/database.js';
import { HttpError } from './errors.js';
import { decodeJsonBody } from './http/json-text.js';
import { withContext } from './http/request-context.js';

/**
 * The import helper program, started by server/backup/import-process.ts as `<node> import-helper.js
 * <database>` with an IPC channel: an import of 64 MiB is a fifth of a second of JSON.parse and
 * seconds of checking and writing, none of which the server's event loop should carry. It reads the
 * body from stdin, parses and checks it (says `checked`, or `refused` with the 400 to answer), then
 * waits for `write` (the server has taken its pre-import snapshot and holds its own writes) and
 * writes the whole import and its change log entry in one transaction on its own connection; says
 * `written` with what the server is to announce, and ends. Built as its own entry point:
 * dist/server/import-helper.js, and dist/electron/import-helper.cjs for the desktop app.
 */

const send = (message: HelperMessage) => void process.send!(message);

function refusal(err: unknown): HelperMessage | undefined {
  if (err instanceof HttpError) return { stage: 'refused', status: err.status, body: err.body, headers: err.headers };
  const e = err as { type?: unknown; status?: unknown; message?: unknown };
  if (typeof e?.type === 'string' && typeof e.status === 'number' && e.status < 500) return { stage: 'refused', status: e.status, type: e.type, message: String(e.message) };
  return undefined;
}

async function run(dbPath: string): Promise<void> {
  const body = await buffer(process.stdin);
  const db = openRetained(dbPath, { fileMustExist: true, timeout: 5000 });
  db.exec('PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;');
  const announced: [string, unknown][] = [];
  let now = Date.now();
  const data = { ...createDataContext(db), clock: { now: () => now } };
  // What the change log and the import announce, told to the server once written.
  data.bus.on('audit.entry', (entry) => void announced.push(['audit.entry', entry]));
  data.bus.on('backup.imported', (payload) => void announced.push(['backup.imported', payload]));
  const backup = createBackupService(data, createAuditLog(data), backupSourcesOn(db), { helperFile: false });
  let plan: ImportPlan;
  try {
    plan = backup.validate(decodeJsonBody(body));
  } catch (err) {
    const refused = refusal(err);
    if (!refused) throw err;
    send(refused);
    return;
  }
  send({ stage: 'checked' });
  const order = await new Promise<ServerMessage>((resolve) => process.once('message', resolve));
  now = order.now;
  const { request, ...context } = order.context;
  const result = withContext({ ...context, ...(request ? { request: { ...request, status: () => request.status } } : {}) }, () => backup.apply(plan, now));
  db.close();
  send({ stage: 'written', imported: result.imported, announced });
}

const [dbPath] = process.argv.slice(2);
if (!process.send || !dbPath) {
  process.stderr.write('usage: import-helper <database>, started by the server with an IPC channel and the body on stdin\n');
  process.exit(2);
}
// A server that went away ends it: an import not committed leaves nothing behind.
runHelper(() => run(dbPath));
