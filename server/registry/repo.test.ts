import { describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../db/database.js';
import { createRegistryBackup } from './backup.js';
import { createInstanceRepo } from './repo.js';
import type { ListQuery } from './schema.js';
import type { BackupInstance } from '../contract/inputs/backup.js';

/** The repo on an in-memory database, with the SQL of the list statement each query prepared. */
function repoWithPlans() {
  const db = openDatabase(':memory:');
  const prepared: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => (prepared.push(sql), prepare(sql))) as Db['prepare'];
  const repo = createInstanceRepo(db);
  for (let i = 0; i < 40; i++) {
    const at = `2026-11-22T10:00:${String(i % 7).padStart(2, '0')}Z`;
    repo.insert({ vmid: 100 + i, name: ['web', 'db', 'cache', 'Web'][i % 4]! + `-${i}`, state: ['deployed', 'testing'][i % 2] as 'deployed', stack: 'development',
      tailscale_ip: '', atlas: 0, argus: 0, semaphore: 0, patchmon: 0, tailscale: 0, andromeda: 0, hardware_acceleration: 0, tags: [['web'], ['edge', 'web'], ['web_x'], []][i % 4]! }, at);
  }
  /** What SQLite does for a list query: its EXPLAIN QUERY PLAN lines, joined. */
  const planOf = (query: ListQuery, params: Record<string, string>) => {
    const before = prepared.length;
    repo.list(query);
    const sql = prepared.slice(before).find((text) => text.startsWith('SELECT'))!;
    return db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params).map((row) => (row as { detail: string }).detail).join(' | ');
  };
  return { repo, planOf };
}

describe('list plans', () => {
  it('walks the sort index for an unfiltered list: rows come out in order, nothing is sorted', () => {
    const { planOf } = repoWithPlans();
    expect(planOf({ sort: 'updated_at', descending: true }, {})).toBe('SCAN instances USING INDEX instances_updated');
    expect(planOf({ sort: 'name', descending: false }, {})).toBe('SCAN instances USING INDEX instances_name');
  });

  it('scans the table and sorts only the matches for a search, instead of looking up every row through the sort index', () => {
    const { planOf } = repoWithPlans();
    for (const sort of ['updated_at', 'name', 'created_at'] as const) {
      expect(planOf({ search: 'web', sort, descending: true }, { search: '%web%' })).toBe('SCAN instances | USE TEMP B-TREE FOR ORDER BY');
    }
  });

  it('gives a search the same order as the unfiltered list, ties broken by insertion', () => {
    const { repo } = repoWithPlans();
    for (const [sort, descending] of [['updated_at', true], ['updated_at', false], ['name', false], ['name', true], ['vmid', true]] as const) {
      const all = repo.list({ sort, descending }).filter((i) => /web/i.test(i.name));
      expect(repo.list({ search: 'web', sort, descending })).toEqual(all);
    }
    const byState = repo.list({ sort: 'updated_at', descending: true }).filter((i) => i.state === 'testing');
    expect(repo.list({ state: 'testing', sort: 'updated_at', descending: true })).toEqual(byState);
  });

  it('matches every tag given, each exactly: `web` is not `web_x`, and `_` is no wildcard', () => {
    const { repo } = repoWithPlans();
    const vmids = (tags: string[]) => repo.list({ tags, sort: 'vmid', descending: false }).map((i) => i.vmid);
    const all = repo.list({ sort: 'vmid', descending: false });
    expect(vmids(['web'])).toEqual(all.filter((i) => i.tags.includes('web')).map((i) => i.vmid));
    expect(vmids(['web']).length).toBe(20);
    expect(vmids(['edge', 'web'])).toEqual(all.filter((i) => i.tags.join(',') === 'edge,web').map((i) => i.vmid));
    expect(vmids(['web_x'])).toHaveLength(10);
    expect(vmids(['webax'])).toEqual([]);
    expect(vmids(['we'])).toEqual([]);
    expect(repo.findByVmid(101)!.tags).toEqual(['edge', 'web']);
    expect(repo.findByVmid(103)!.tags).toEqual([]);
  });
});

describe('the registry’s rows for a backup (server/registry/backup.ts)', () => {
  it('exports what it imported, with each instance’s history and an `imported` entry; imports only inside a transaction', () => {
    const db = openDatabase(':memory:');
    const rows = createRegistryBackup(db);
    const web: BackupInstance = { vmid: 101, name: 'web', state: 'deployed', stack: 'production', tailscale_ip: '', atlas: 1, argus: 0, semaphore: 0, patchmon: 0,
      tailscale: 0, andromeda: 0, hardware_acceleration: 0, tags: ['edge', 'web'], created_at: '2026-11-01T00:00:00Z', updated_at: '2026-11-02T00:00:00Z' };
    const renamed = { vmid: 101, field: 'name', old_value: 'www', new_value: 'web', changed_at: '2026-11-02T00:00:00.000Z', changed_by: 'ada' };
    const now = Date.parse('2026-11-22T10:00:00.000Z');
    expect(() => rows.importRows([web], [renamed], now)).toThrow(/inside the import’s transaction/);
    expect(rows.exportInstances()).toEqual([]);

    db.transaction(() => rows.importRows([web, { ...web, vmid: 102, name: 'db', tags: [], created_at: undefined, updated_at: undefined }], [renamed], now))();
    expect(rows.exportInstances()).toEqual([web, { ...web, vmid: 102, name: 'db', tags: [], created_at: '2026-11-22T10:00:00Z', updated_at: '2026-11-22T10:00:00Z' }]);
    const imported = { field: 'imported', old_value: null, new_value: null, changed_at: '2026-11-22T10:00:00.000Z', changed_by: 'import' };
    expect(rows.exportHistory()).toEqual([renamed, { vmid: 101, ...imported }, { vmid: 102, ...imported }]);
  });
});
