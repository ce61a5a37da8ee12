import { describe, expect, it } from 'vitest';
import { migrate, openDatabase } from './database.js';
import { migrations } from './migrations/index.js';

// 0010 moves host removals (host_deletions) and agent upgrades (the hosts' upgrade_* columns) into
// the one operations table: a database written by the release before keeps every removal and upgrade.
describe('migration 0010 (operations)', () => {
  it('carries removals and upgrades over, with the states they had', () => {
    const db = openDatabase(':memory:', migrations.filter((m) => m.version < 10));
    const host = db.prepare("INSERT INTO hosts (machine_id, hostname, enrolled_at, agent_version, heartbeat_interval_s) VALUES (?, 'pve', 1, '1.0.0', 30)");
    for (const m of ['m1', 'm2', 'm3']) host.run(m);
    db.prepare("UPDATE hosts SET upgrade_state = 'in_progress', upgrade_version = '1.1.0', upgrade_from = '1.0.0', upgrade_requested_at = 5, upgrade_started_at = 6 WHERE id = 1").run();
    db.prepare("UPDATE hosts SET upgrade_state = 'failed', upgrade_version = '1.2.0', upgrade_from = '1.0.0', upgrade_requested_at = 7, upgrade_started_at = 8, upgrade_finished_at = 9 WHERE id = 2").run();
    const deletion = db.prepare('INSERT INTO host_deletions (id, host_id, status, created_by, created_at, receipt_hash, receipt_expires_at, delivered_at, confirmed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
    deletion.run('del-a', 1, 'delivered', 'admin', 10, 'hash-a', 99, 11, null);
    deletion.run('del-b', 2, 'forced', 'admin', 12, null, null, null, 13);
    deletion.run('del-c', 3, 'confirmed', null, 14, 'hash-c', 98, 15, 16);

    migrate(db);

    const ops = db.prepare('SELECT id, host_id, type, params, status, requested_by, requested_at, sent_at, finished_at, receipt_hash, receipt_expires_at, forced FROM operations ORDER BY requested_at').all();
    expect(ops).toEqual([
      { id: expect.stringMatching(/^[0-9a-f]{32}$/), host_id: 1, type: 'upgrade', params: '{"version":"1.1.0","from":"1.0.0"}', status: 'sent', requested_by: null, requested_at: 5, sent_at: 6, finished_at: null, receipt_hash: null, receipt_expires_at: null, forced: 0 },
      { id: expect.stringMatching(/^[0-9a-f]{32}$/), host_id: 2, type: 'upgrade', params: '{"version":"1.2.0","from":"1.0.0"}', status: 'failed', requested_by: null, requested_at: 7, sent_at: 8, finished_at: 9, receipt_hash: null, receipt_expires_at: null, forced: 0 },
      { id: 'del-a', host_id: 1, type: 'uninstall', params: '{}', status: 'sent', requested_by: 'admin', requested_at: 10, sent_at: 11, finished_at: null, receipt_hash: 'hash-a', receipt_expires_at: 99, forced: 0 },
      { id: 'del-b', host_id: 2, type: 'uninstall', params: '{}', status: 'cancelled', requested_by: 'admin', requested_at: 12, sent_at: null, finished_at: 13, receipt_hash: null, receipt_expires_at: null, forced: 1 },
      { id: 'del-c', host_id: 3, type: 'uninstall', params: '{}', status: 'succeeded', requested_by: null, requested_at: 14, sent_at: 15, finished_at: 16, receipt_hash: 'hash-c', receipt_expires_at: 98, forced: 0 },
    ]);
    const columns = (db.prepare("SELECT name FROM pragma_table_info('hosts')").pluck().all() as string[]).filter((c) => c.startsWith('upgrade'));
    expect(columns).toEqual([]);
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'host_deletions'").pluck().get()).toBe(0);
    db.close();
  });

  it('holds at most one unfinished action per guest', () => {
    const db = openDatabase(':memory:');
    db.prepare("INSERT INTO hosts (machine_id, hostname, enrolled_at, agent_version, heartbeat_interval_s) VALUES ('m', 'pve', 1, '1.0.0', 30)").run();
    const insert = db.prepare("INSERT INTO operations (id, host_id, type, vmid, action, status, requested_at) VALUES (?, 1, 'guest.action', 100, 'stop', ?, 1)");
    insert.run('a', 'succeeded');
    insert.run('b', 'pending');
    expect(() => insert.run('c', 'pending')).toThrow(/UNIQUE/);
    expect(() => insert.run('d', 'sent')).toThrow(/UNIQUE/);
    db.close();
  });
});
