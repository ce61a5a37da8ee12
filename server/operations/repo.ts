import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.js';
import type { GuestAction, OperationStatus, OperationType } from '../contract/operations.js';

export interface OperationRow {
  id: string;
  host_id: number;
  type: OperationType;
  vmid: number | null;
  action: GuestAction | null;
  /** JSON of the command's own fields. */
  params: string;
  reason: string | null;
  status: OperationStatus;
  requested_by: string | null;
  requested_at: number;
  sent_at: number | null;
  result_due_at: number | null;
  finished_at: number | null;
  exit_code: number | null;
  output: string | null;
  forced: 0 | 1;
}

export interface NewOperation {
  id: string;
  host_id: number;
  type: OperationType;
  vmid: number | null;
  action: GuestAction | null;
  params: Record<string, unknown>;
  reason: string | null;
  requested_by: string | null;
  requested_at: number;
}

export interface OperationFilter {
  host_id?: number;
  vmid?: number;
  status?: OperationStatus;
  limit: number;
}

const COLUMNS =
  'id, host_id, type, vmid, action, params, reason, status, requested_by, requested_at, sent_at, result_due_at, finished_at, exit_code, output, forced';

export type OperationRepo = ReturnType<typeof createOperationRepo>;

/** SQL of the operations table (server/db/migrations/0010): every command an agent receives. */
export function createOperationRepo(db: Db) {
  const s = {
    insert: db.prepare<[string, number, string, number | null, string | null, string, string | null, string | null, number]>(
      `INSERT INTO operations (id, host_id, type, vmid, action, params, reason, status, requested_by, requested_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
    ),
    byId: db.prepare<[string], OperationRow>(`SELECT ${COLUMNS} FROM operations WHERE id = ?`),
    pendingOf: db.prepare<[number, string], OperationRow>(
      `SELECT ${COLUMNS} FROM operations WHERE host_id = ? AND type = ? AND status = 'pending' ORDER BY requested_at, rowid`,
    ),
    openForGuest: db.prepare<[number, number], OperationRow>(
      `SELECT ${COLUMNS} FROM operations WHERE host_id = ? AND vmid = ? AND type IN ('guest.action', 'deploy', 'script') AND status IN ('pending', 'sent')`,
    ),
    // Pushes of a file (operations of type upload) not yet ended: by host and storage, by host, or anywhere.
    openUploadTo: db.prepare<[number, number, string], number>(
      `SELECT 1 FROM operations WHERE host_id = ? AND type = 'upload' AND status IN ('pending', 'sent')
          AND json_extract(params, '$.file_id') = ? AND json_extract(params, '$.storage') = ? LIMIT 1`,
    ).pluck(),
    openUploadOn: db.prepare<[number, number], number>(
      "SELECT 1 FROM operations WHERE host_id = ? AND type = 'upload' AND status IN ('pending', 'sent') AND json_extract(params, '$.file_id') = ? LIMIT 1",
    ).pluck(),
    openUpload: db.prepare<[number], number>(
      "SELECT 1 FROM operations WHERE type = 'upload' AND status IN ('pending', 'sent') AND json_extract(params, '$.file_id') = ? LIMIT 1",
    ).pluck(),
    markSent: db.prepare<[number, number, string]>("UPDATE operations SET status = 'sent', sent_at = ?, result_due_at = ? WHERE id = ? AND status = 'pending'"),
    finish: db.prepare<[string, number, number | null, string | null, string, string]>(
      'UPDATE operations SET status = ?, finished_at = ?, exit_code = ?, output = ? WHERE id = ? AND status = ?',
    ),
    // Not fetched within 10 minutes, or no result by the time it was due.
    overdue: db.prepare<[string, number, number], OperationRow>(
      `SELECT ${COLUMNS} FROM operations
        WHERE type = ? AND ((status = 'pending' AND requested_at < ?) OR (status = 'sent' AND result_due_at < ?))
        ORDER BY requested_at LIMIT 100`,
    ),
  };
  const lists = new Map<string, Statement<unknown[], OperationRow>>();

  return {
    insert(op: NewOperation): void {
      s.insert.run(op.id, op.host_id, op.type, op.vmid, op.action, JSON.stringify(op.params), op.reason, op.requested_by, op.requested_at);
    },
    byId: (id: string) => s.byId.get(id),
    /** Waiting to be handed out, oldest first. */
    pendingOf: (hostId: number, type: OperationType) => s.pendingOf.all(hostId, type),
    /** The guest's unfinished action, deploy or script, if any: "an operation is already pending for this guest". */
    openForGuest: (hostId: number, vmid: number) => s.openForGuest.get(hostId, vmid),
    /** A push of the file to this storage of the host is pending or sent. */
    uploadRunning: (hostId: number, fileId: number, storage: string) => s.openUploadTo.get(hostId, fileId, storage) !== undefined,
    /** The host has a pending or sent push of the file: it may fetch it. */
    uploadOpenOn: (hostId: number, fileId: number) => s.openUploadOn.get(hostId, fileId) !== undefined,
    /** Any host has a pending or sent push of the file: the file cache keeps it. */
    uploadOpen: (fileId: number) => s.openUpload.get(fileId) !== undefined,
    /** Hands one out: false when it was not pending any more (a command goes out once). */
    markSent: (id: string, now: number, resultDueAt: number) => s.markSent.run(now, resultDueAt, id).changes === 1,
    /** Ends one that is still `from`: false when something else ended it first. */
    finish: (id: string, from: OperationStatus, to: OperationStatus, now: number, exitCode: number | null = null, output: string | null = null) =>
      s.finish.run(to, now, exitCode, output, id, from).changes === 1,
    overdue: (type: OperationType, unfetchedBefore: number, now: number) => s.overdue.all(type, unfetchedBefore, now),

    /** Newest first, filtered; one prepared statement per shape of filter. */
    list(filter: OperationFilter): OperationRow[] {
      const where: string[] = [];
      const params: unknown[] = [];
      if (filter.host_id !== undefined) (where.push('host_id = ?'), params.push(filter.host_id));
      if (filter.vmid !== undefined) (where.push('vmid = ?'), params.push(filter.vmid));
      if (filter.status !== undefined) (where.push('status = ?'), params.push(filter.status));
      const sql = `SELECT ${COLUMNS} FROM operations ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY requested_at DESC, rowid DESC LIMIT ?`;
      let statement = lists.get(sql);
      if (!statement) lists.set(sql, (statement = db.prepare<unknown[], OperationRow>(sql)));
      return statement.all(...params, filter.limit);
    },
  };
}
