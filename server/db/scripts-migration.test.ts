import { describe, expect, it } from 'vitest';
import { migrate, openDatabase } from './database.js';
import { migrations } from './migrations/index.js';

// 0022 copies the operations table once to take the type `script`: a database written by the
// release before keeps every operation as it was, and its hosts allow no scripts until they say so.
describe('migration 0022 (scripts)', () => {
  it('keeps every operation, takes scripts, holds one open operation per guest for them too', () => {
    const db = openDatabase(':memory:', migrations.filter((m) => m.version < 22));
    db.prepare("INSERT INTO hosts (machine_id, hostname, enrolled_at, agent_version, heartbeat_interval_s) VALUES ('m', 'pve', 1, '1.0.0', 30)").run();
    const insert = db.prepare(
      "INSERT INTO operations (id, host_id, type, vmid, action, params, status, requested_by, requested_at, exit_code, output, forced) VALUES (?, 1, ?, ?, ?, ?, ?, 'alice', ?, ?, ?, ?)",
    );
    insert.run('a', 'guest.action', 100, 'stop', '{"guest_type":"qemu"}', 'succeeded', 5, 0, 'stopped', 1);
    insert.run('b', 'deploy', 300, null, '{"name":"web"}', 'pending', 6, null, null, 0);
    insert.run('c', 'upload', null, null, '{"file_id":1}', 'sent', 7, null, null, 0);
    const before = db.prepare('SELECT * FROM operations ORDER BY id').all();

    migrate(db);

    expect(db.prepare('SELECT * FROM operations ORDER BY id').all()).toEqual(before);
    expect(db.prepare('SELECT allows_scripts FROM hosts').pluck().get()).toBe(0);
    const script = db.prepare("INSERT INTO operations (id, host_id, type, vmid, status, requested_at) VALUES (?, 1, 'script', ?, 'pending', 9)");
    script.run('s1', 200);
    expect(() => script.run('s2', 200)).toThrow(/UNIQUE/);
    expect(() => script.run('s3', 300)).toThrow(/UNIQUE/);
    // Scripts on the host itself have no vmid, and are not held to it.
    script.run('h1', null);
    script.run('h2', null);
    expect(() => db.prepare("INSERT INTO operations (id, host_id, type, status, requested_at) VALUES ('x', 1, 'nonsense', 'pending', 1)").run()).toThrow(/CHECK/);
    db.close();
  });
});
