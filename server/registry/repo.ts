import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.js';
import type { InstanceInput } from '../contract/inputs/registry.js';
import type { Flag, HistoryEntry, Instance, InstanceHost, PlacedInstance } from '../contract/registry.js';
import type { ListQuery, WritableField } from './schema.js';
import { listFilters, SORT_COLUMNS } from './list-sql.js';

export const COLUMNS =
  'vmid, name, state, stack, tailscale_ip, atlas, argus, semaphore, patchmon, tailscale, andromeda, hardware_acceleration, tags, created_at, updated_at';

/** Tags as the instances table keeps them: comma-joined, sorted (a tag holds no comma), '' for none. */
export const joinTags = (tags: readonly string[]): string => tags.join(',');
export const splitTags = (text: string): string[] => (text ? text.split(',') : []);

export interface StoredInstance extends Instance {
  id: number;
}

/** Where an instance's guest runs, as hosts (server/hosts/placements.ts) know it: by vmid. */
export interface Placement {
  host: InstanceHost;
  guest_status: string;
}
export type Placements = ReadonlyMap<number, Placement>;
const NOWHERE: Placements = new Map();

/** What tailscale_sync last learnt of an instance's device, beside the registry (migration 0015): read-only, never in history or the backup. */
export interface TailnetFacts {
  /** The device's IPv6 tailnet address; null clears what was kept. */
  tailscale_ipv6: string | null;
}

/**
 * A list row (COLUMNS, in order) as an Instance. Lists read raw rows and shape them here: a row object
 * from better-sqlite3 looks every column name up again for each row, and a search of 1,000 rows cost
 * half again as much CPU that way (5.7 ms against 3.7 ms, the JSON answer included).
 */
function toInstance(row: unknown[], placements: Placements, tailnet: ReadonlyMap<number, string>): PlacedInstance {
  const r = row as [number, string, Instance['state'], Instance['stack'], string, Flag, Flag, Flag, Flag, Flag, Flag, Flag, string, string, string];
  const placement = placements.get(r[0]);
  return {
    vmid: r[0], name: r[1], state: r[2], stack: r[3], tailscale_ip: r[4], atlas: r[5], argus: r[6], semaphore: r[7], patchmon: r[8],
    tailscale: r[9], andromeda: r[10], hardware_acceleration: r[11], tags: splitTags(r[12]), created_at: r[13], updated_at: r[14],
    host: placement ? placement.host : null, guest_status: placement ? placement.guest_status : null, tailscale_ipv6: tailnet.get(r[0]) ?? null,
  };
}

export type InstanceRepo = ReturnType<typeof createInstanceRepo>;

/** SQL of the registry. Statements are prepared once; list queries once per shape. */
export function createInstanceRepo(db: Db) {
  const byVmid = db.prepare<[number], Omit<StoredInstance, 'tags'> & { tags: string }>(`SELECT id, ${COLUMNS} FROM instances WHERE vmid = ?`);
  type Row = Omit<InstanceInput, 'tags'> & { tags: string };
  const insert = db.prepare<Row & { created_at: string; updated_at: string }>(
    `INSERT INTO instances (${COLUMNS}) VALUES (@vmid, @name, @state, @stack, @tailscale_ip, @atlas, @argus,
       @semaphore, @patchmon, @tailscale, @andromeda, @hardware_acceleration, @tags, @created_at, @updated_at)`,
  );
  // An update sets the columns that change and updated_at, no others: SQLite then rewrites only the
  // indexes of those columns (a bulk edit of 1,000 instances' tags: 15 ms, against 50 setting all of them).
  const updates = new Map<string, Statement<Record<string, unknown>>>();
  function updateOf(fields: readonly WritableField[]): Statement<Record<string, unknown>> {
    const key = fields.join();
    let statement = updates.get(key);
    if (!statement) {
      statement = db.prepare<Record<string, unknown>>(`UPDATE instances SET ${fields.map((f) => `${f} = @${f}, `).join('')}updated_at = @updated_at WHERE id = @id`);
      updates.set(key, statement);
    }
    return statement;
  }
  // One statement for any number of vmids: the list travels as one JSON parameter.
  const byVmids = db.prepare<[string], Pick<Instance, 'vmid' | 'name' | 'stack' | 'state'>>(
    'SELECT vmid, name, stack, state FROM instances WHERE vmid IN (SELECT value FROM json_each(?))',
  );
  const manyByVmid = db.prepare<[string], Omit<StoredInstance, 'tags'> & { tags: string }>(
    `SELECT id, ${COLUMNS} FROM instances WHERE vmid IN (SELECT value FROM json_each(?))`,
  );
  const remove = db.prepare<[number]>('DELETE FROM instances WHERE id = ?');
  const stacks = db.prepare<[], { stack: string }>('SELECT DISTINCT stack FROM instances ORDER BY stack');
  const pageAfter = db.prepare<[number, number], unknown[]>(`SELECT ${COLUMNS} FROM instances WHERE vmid > ? ORDER BY vmid LIMIT ?`).raw(true);
  const tailnetBetween = db.prepare<[number, number], [number, string]>('SELECT vmid, ipv6 FROM tailnet_facts WHERE vmid BETWEEN ? AND ?').raw(true);
  const insertHistory = db.prepare<[number, string, string | null, string | null, string, string | null, number]>(
    'INSERT INTO instance_history (instance_id, field, old_value, new_value, changed_at, changed_by, change_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  // The field changes of change log entries (issue 35): each history row names the entry that made it;
  // a deleted instance's rows are kept (for time travel) with theirs, so its entries keep their changes.
  const changesOf = db.prepare<[string, string], { change_id: number; field: string; old_value: string | null; new_value: string | null }>(
    `SELECT change_id, field, old_value, new_value FROM (
       SELECT 0 AS kept, id, change_id, field, old_value, new_value FROM instance_history WHERE change_id IN (SELECT value FROM json_each(?))
       UNION ALL
       SELECT 1, id, change_id, field, old_value, new_value FROM deleted_instance_history WHERE change_id IN (SELECT value FROM json_each(?)))
     WHERE field NOT IN ('created', 'imported', 'rebuilt') ORDER BY kept, id`,
  );
  const history = db.prepare<[number], HistoryEntry>(
    `SELECT h.id, i.vmid, h.field, h.old_value, h.new_value, h.changed_at, h.changed_by
       FROM instance_history h JOIN instances i ON i.id = h.instance_id
      WHERE h.instance_id = ? ORDER BY h.changed_at DESC, h.id DESC`,
  );
  const tailnetAll = db.prepare<[], [number, string]>('SELECT vmid, ipv6 FROM tailnet_facts').raw(true);
  const tailnetOf = db.prepare<[number], string>('SELECT ipv6 FROM tailnet_facts WHERE vmid = ?').pluck();
  // An address that is already kept is no change: the upsert then touches nothing and counts none.
  const keepTailnet = db.prepare<[number, string]>(
    'INSERT INTO tailnet_facts (vmid, ipv6) VALUES (?, ?) ON CONFLICT (vmid) DO UPDATE SET ipv6 = excluded.ipv6 WHERE ipv6 != excluded.ipv6',
  );
  const clearTailnet = db.prepare<[number]>('DELETE FROM tailnet_facts WHERE vmid = ?');
  const listStatements = new Map<string, Statement<Record<string, string>, unknown[]>>();

  function listStatement(where: readonly string[], query: ListQuery) {
    const dir = query.descending ? 'DESC' : 'ASC';
    // Unfiltered, SQLite walks the sort column's index: rows come out in order, nothing to sort. With
    // a filter it would still walk that index and look up every row to test it (a search of 10,000
    // rows: 8 ms); a unary + keeps the index out of the ORDER BY, so it scans the table once and sorts
    // only the matches (5.5 ms). The row id is the second key in the same direction: same-second rows
    // keep insertion order.
    const plus = where.length ? '+' : '';
    const sql = `SELECT ${COLUMNS} FROM instances ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
      ORDER BY ${plus}${SORT_COLUMNS[query.sort]} ${dir}, ${plus}id ${dir}`;
    let statement = listStatements.get(sql);
    if (!statement) {
      statement = db.prepare<Record<string, string>, unknown[]>(sql).raw(true);
      listStatements.set(sql, statement);
    }
    return statement;
  }

  return {
    findByVmid: (vmid: number): StoredInstance | undefined => {
      const row = byVmid.get(vmid);
      return row && { ...row, tags: splitTags(row.tags) };
    },
    /** The stored instances among `vmids`, by vmid, in one statement (a missing vmid is absent). */
    findMany(vmids: readonly number[]): Map<number, StoredInstance> {
      const found = new Map<number, StoredInstance>();
      if (vmids.length) for (const row of manyByVmid.all(JSON.stringify(vmids))) found.set(row.vmid, { ...row, tags: splitTags(row.tags) });
      return found;
    },
    byVmids: (vmids: readonly number[]) => (vmids.length ? byVmids.all(JSON.stringify(vmids)) : []),
    list(query: ListQuery, placements: Placements = NOWHERE): PlacedInstance[] {
      const { where, params } = listFilters(query);
      let rows = listStatement(where, query).all(params);
      // By host and guest status: the placements are what hosts report, kept beside the registry, not in its table.
      const host = query.host;
      if (host === 'none') rows = rows.filter((r) => !placements.has(r[0] as number));
      else if (host !== undefined) rows = rows.filter((r) => placements.get(r[0] as number)?.host.id === host);
      const status = query.guestStatus;
      if (status !== undefined) rows = rows.filter((r) => placements.get(r[0] as number)?.guest_status === status);
      const tailnet = rows.length ? new Map(tailnetAll.all()) : new Map<number, string>();
      return rows.map((r) => toInstance(r, placements, tailnet));
    },
    /** Up to `limit` instances after `vmid`, by vmid: a reader of the whole registry takes it a page at a time. */
    pageAfter(vmid: number, limit: number, placements: Placements = NOWHERE): PlacedInstance[] {
      const rows = pageAfter.all(vmid, limit);
      if (rows.length === 0) return [];
      const tailnet = new Map(tailnetBetween.all(rows[0]![0] as number, rows.at(-1)![0] as number));
      return rows.map((r) => toInstance(r, placements, tailnet));
    },
    stacks: () => stacks.all().map((row) => row.stack),
    insert: (input: InstanceInput, at: string) => Number(insert.run({ ...input, tags: joinTags(input.tags), created_at: at, updated_at: at }).lastInsertRowid),
    /** Stores `changed` of `input` (the fields that differ from what is stored) and the time. */
    update(id: number, input: InstanceInput, changed: readonly WritableField[], at: string): void {
      const values: Record<string, unknown> = { id, updated_at: at };
      for (const field of changed) values[field] = field === 'tags' ? joinTags(input.tags) : input[field];
      updateOf(changed).run(values);
    },
    remove: (id: number) => void remove.run(id),
    /** One history row, part of the change log entry `changeId`. */
    addHistory: (instanceId: number, field: string, oldValue: string | null, newValue: string | null, at: string, by: string | null, changeId: number) =>
      void insertHistory.run(instanceId, field, oldValue, newValue, at, by, changeId),
    changesOf: (changeIds: readonly number[]) => {
      const ids = JSON.stringify(changeIds);
      return changesOf.all(ids, ids);
    },
    history: (instanceId: number) => history.all(instanceId),
    tailscaleIpv6: (vmid: number): string | null => tailnetOf.get(vmid) ?? null,
    /** Keeps (or clears) an existing instance's tailnet facts; true when that changed what is kept. */
    setTailnet: (vmid: number, facts: TailnetFacts): boolean =>
      (facts.tailscale_ipv6 === null ? clearTailnet.run(vmid) : keepTailnet.run(vmid, facts.tailscale_ipv6)).changes > 0,
  };
}
