import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.js';
import type { Flag, Instance, ListedInstance } from '../contract/registry.js';
import { FLAGS } from '../contract/registry.js';
import { isoMillis, isoSeconds } from '../time.js';
import { listFilters, SORT_COLUMNS } from './list-sql.js';
import { COLUMNS, splitTags } from './repo.js';
import { WRITABLE_FIELDS, type ListQuery } from './schema.js';

const NUMERIC: ReadonlySet<string> = new Set(['vmid', ...FLAGS]);
const WRITABLE = WRITABLE_FIELDS.map((f) => `'${f}'`).join(', ');

/**
 * Where rows come from: the registry now, or the instances deleted since (migration 0026). Each piece
 * names its table in its own text, for the ownership check (build/tables.test.ts).
 */
interface Source {
  /** The rows, as `r`: what each holds now (or held when deleted). */
  rows: string;
  /** The history rows after `@at`, by `owner` (the row's id) and field. */
  later: string;
  /**
   * The time of the row's last field change by `@at`, to the second: read backwards along the row's
   * changes in time (the unary + keeps the planner off instance_history_field, which would seek once per field).
   */
  lastChange: string;
  /** Its vmid now, for `current_vmid`. */
  current: string;
  /** The row's id in `instances` while it was there: ties in the sort keep the order they had. */
  tie: string;
  /** Still there at `@at`. */
  alive: string;
  /** The rows that ever held `@vmid` (a vmid change is in history too). */
  holders: string;
}

const NOW: Source = {
  rows: 'FROM instances r',
  later: 'SELECT instance_id AS owner, field, old_value, min(id) FROM instance_history WHERE changed_at > @at',
  lastChange: `SELECT substr(h.changed_at, 1, 19) || 'Z' FROM instance_history h WHERE h.instance_id = r.id AND h.changed_at <= @at AND +h.field IN (${WRITABLE}) ORDER BY h.changed_at DESC LIMIT 1`,
  current: 'r.vmid',
  tie: 'r.id',
  alive: '',
  holders: "SELECT id FROM instances WHERE vmid = @vmid UNION SELECT instance_id FROM instance_history WHERE field = 'vmid' AND (old_value = @vmid_text OR new_value = @vmid_text)",
};
const DELETED: Source = {
  rows: 'FROM deleted_instances r',
  later: 'SELECT deleted_id AS owner, field, old_value, min(id) FROM deleted_instance_history WHERE changed_at > @at',
  lastChange: `SELECT substr(h.changed_at, 1, 19) || 'Z' FROM deleted_instance_history h WHERE h.deleted_id = r.id AND h.changed_at <= @at AND +h.field IN (${WRITABLE}) ORDER BY h.changed_at DESC LIMIT 1`,
  current: 'NULL',
  tie: 'r.instance_id',
  alive: 'AND r.deleted_at > @at',
  holders: "SELECT id FROM deleted_instances WHERE vmid = @vmid UNION SELECT deleted_id FROM deleted_instance_history WHERE field = 'vmid' AND (old_value = @vmid_text OR new_value = @vmid_text)",
};

/**
 * One source's rows as they were at `@at` (ms text; `@at_s`, the same to the second, for created_at).
 * A field's value then is the old value of its first change after `@at`, else the row's value (now,
 * or at its deletion): creation records no values, so nothing earlier is needed. `l` is that first
 * change of each (row, field), read in one pass of instance_history_field; the first by id, as
 * changes are written in time order and ids never tie. A row existed when it was created by then (a
 * `created` change after `@at` says not yet, to the millisecond) and, if deleted, deleted after.
 * updated_at then is its last field change by then (to the second), else its creation.
 */
function rebuilt(source: Source, only: boolean): string {
  const fields = WRITABLE_FIELDS.map((f) => {
    const then = `max(CASE l.field WHEN '${f}' THEN l.old_value END)`;
    return `COALESCE(${NUMERIC.has(f) ? `CAST(${then} AS INTEGER)` : then}, r.${f}) AS ${f}`;
  });
  return `SELECT ${fields.join(', ')}, r.created_at AS created_at,
      CASE WHEN max(l.field IN (${WRITABLE})) THEN COALESCE((${source.lastChange}), r.created_at) ELSE r.updated_at END AS updated_at,
      ${source.current} AS current_vmid, ${source.tie} AS tie
    ${source.rows}
    LEFT JOIN (${source.later} ${only ? `AND owner IN (${source.holders})` : ''} GROUP BY owner, field) l ON l.owner = r.id
    WHERE r.created_at <= @at_s ${source.alive} ${only ? `AND r.id IN (${source.holders})` : ''}
    GROUP BY r.id
    HAVING max(l.field = 'created') IS NOT 1`;
}

type Row = [number, string, Instance['state'], Instance['stack'], string, Flag, Flag, Flag, Flag, Flag, Flag, Flag, string, string, string, number | null];

/** A rebuilt row (COLUMNS, then current_vmid) as the API shows it: what hosts report is not in history, so null. */
function toPast(r: Row): ListedInstance {
  return {
    vmid: r[0], name: r[1], state: r[2], stack: r[3], tailscale_ip: r[4], atlas: r[5], argus: r[6], semaphore: r[7], patchmon: r[8],
    tailscale: r[9], andromeda: r[10], hardware_acceleration: r[11], tags: splitTags(r[12]), created_at: r[13], updated_at: r[14],
    host: null, guest_status: null, tailscale_ipv6: null, current_vmid: r[15],
  };
}

export type PastRepo = ReturnType<typeof createPastRepo>;

/**
 * The registry as it was (issue 39, time travel): rebuilt from history in SQL, filtered and sorted
 * by the values then as the list filters and sorts the values now (list-sql.ts). Also keeps what
 * that needs of a deleted instance.
 */
export function createPastRepo(db: Db) {
  const statements = new Map<string, Statement<Record<string, unknown>, unknown[]>>();
  const prepared = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare<Record<string, unknown>, unknown[]>(sql).raw(true);
      statements.set(sql, statement);
    }
    return statement;
  };
  const keepRow = db.prepare<[string, number]>(
    `INSERT INTO deleted_instances (instance_id, ${COLUMNS}, deleted_at) SELECT id, ${COLUMNS}, ? FROM instances WHERE id = ?`,
  );
  const keepHistory = db.prepare<[number, number]>(
    `INSERT INTO deleted_instance_history (deleted_id, field, old_value, new_value, changed_at, changed_by, change_id)
     SELECT ?, field, old_value, new_value, changed_at, changed_by, change_id FROM instance_history WHERE instance_id = ? ORDER BY id`,
  );
  const forget = db.prepare('DELETE FROM deleted_instances');
  const times = (at: number) => ({ at: isoMillis(at), at_s: isoSeconds(at) });

  return {
    /** GET /api/instances?at=: the instances that existed at `at`, as they were, filtered and sorted as `query` says. */
    list(at: number, query: ListQuery): ListedInstance[] {
      const { where, params } = listFilters(query);
      const dir = query.descending ? 'DESC' : 'ASC';
      const sql = `SELECT ${COLUMNS}, current_vmid FROM (${rebuilt(NOW, false)} UNION ALL ${rebuilt(DELETED, false)})
        ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY ${SORT_COLUMNS[query.sort]} ${dir}, tie ${dir}`;
      return (prepared(sql).all({ ...params, ...times(at) }) as Row[]).map(toPast);
    },
    /** The instance that had `vmid` at `at`, as it was then; only the rows that ever held that vmid are rebuilt. */
    one(at: number, vmid: number): ListedInstance | undefined {
      const sql = `SELECT ${COLUMNS}, current_vmid FROM (${rebuilt(NOW, true)} UNION ALL ${rebuilt(DELETED, true)}) WHERE vmid = @vmid`;
      const row = prepared(sql).all({ ...times(at), vmid, vmid_text: String(vmid) })[0] as Row | undefined;
      return row && toPast(row);
    },
    /** Keeps instance `id` (its row and history, about to be deleted with it) as deleted at `now`. */
    keepDeleted(id: number, now: number): void {
      const kept = Number(keepRow.run(isoMillis(now), id).lastInsertRowid);
      keepHistory.run(kept, id);
    },
    /** An import replaces the registry and its past with the backup's: the deleted instances kept go too. */
    forgetDeleted: () => void forget.run(),
  };
}
