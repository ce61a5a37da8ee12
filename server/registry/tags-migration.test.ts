import { describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../db/database.js';
import { migrations } from '../db/migrations/index.js';

// 0021 gives instances their tags. A deploy made before it kept its tags only in the deploy spec:
// they move onto the instance, and the spec no longer holds them.
describe('migration 0021 (tags and collections)', () => {
  it('moves a deploy’s tags from its spec onto its instance; other instances get none', () => {
    const db = openDatabase(':memory:', migrations.filter((m) => m.version < 21));
    const insert = db.prepare("INSERT INTO instances (vmid, name, state, stack, created_at, updated_at) VALUES (?, ?, 'testing', 'development', 't', 't')");
    for (const [vmid, name] of [[301, 'web-1'], [302, 'plain'], [303, 'untagged-deploy']] as const) insert.run(vmid, name);
    const spec = db.prepare('INSERT INTO instance_deploys (instance_id, spec, deployed_at, deployed_by) VALUES ((SELECT id FROM instances WHERE vmid = ?), ?, ?, ?)');
    spec.run(301, JSON.stringify({ source_type: 'qemu', name: 'web-1', tags: ['edge', 'web'], start: true }), 't', 'ada');
    spec.run(303, JSON.stringify({ source_type: 'qemu', name: 'untagged-deploy', tags: [], start: true }), 't', 'ada');

    migrate(db);

    expect(db.prepare('SELECT vmid, tags FROM instances ORDER BY vmid').all()).toEqual([
      { vmid: 301, tags: 'edge,web' },
      { vmid: 302, tags: '' },
      { vmid: 303, tags: '' },
    ]);
    const specs = db.prepare('SELECT spec FROM instance_deploys ORDER BY instance_id').pluck().all() as string[];
    expect(specs.map((s) => JSON.parse(s))).toEqual([
      { source_type: 'qemu', name: 'web-1', start: true },
      { source_type: 'qemu', name: 'untagged-deploy', start: true },
    ]);
    db.close();
  });

  it('keeps collection names unique whatever their case', () => {
    const db = openDatabase(':memory:');
    const insert = db.prepare('INSERT INTO collections (name) VALUES (?)');
    insert.run('Web');
    expect(() => insert.run('web')).toThrow(/UNIQUE/);
    db.close();
  });
});
