import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEvents } from '../context.js';
import { openDatabase, type Db } from '../db/database.js';
import { systemClock } from '../time.js';
import { createAuditLog, type AuditEntry } from './audit.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('audit entries on the live stream', () => {
  let db: Db;
  let dir: string;
  afterEach(() => {
    if (db.open) db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function setUp() {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-audit-'));
    db = openDatabase(path.join(dir, 'audit.db'));
    const events = createEvents();
    const live: AuditEntry[] = [];
    events.on('audit.entry', (entry) => live.push(entry));
    return { audit: createAuditLog(db, systemClock, events), live };
  }

  it('announces an entry written outside a transaction at once', () => {
    const { audit, live } = setUp();
    audit.write({ actor: 'ann', action: 'logout', target: 'ann' });
    expect(live.map((e) => [e.action, e.actor])).toEqual([['logout', 'ann']]);
  });

  it('announces an entry of a transaction once it has committed, and never one that rolled back', async () => {
    const { audit, live } = setUp();
    db.transaction(() => audit.write({ actor: 'ann', action: 'user.create', target: 'bob' }))();
    expect(() =>
      db.transaction(() => {
        audit.write({ actor: 'ann', action: 'user.update', target: 'bob' });
        throw new Error('the change failed after its audit row');
      })(),
    ).toThrow('failed after its audit row');
    // The rolled-back entry's id is free again: the next entry may take it, and is still announced as itself.
    db.transaction(() => audit.write({ actor: 'ann', action: 'user.revoke_sessions', target: 'bob' }))();
    await nextTurn();
    expect(live.map((e) => e.action)).toEqual(['user.create', 'user.revoke_sessions']);
    expect(audit.list(10).map((e) => e.id)).toEqual([...live].reverse().map((e) => e.id));
  });

  it('a database closed before the announcement is no crash: the entry is simply not announced', async () => {
    const { audit, live } = setUp();
    db.transaction(() => audit.write({ actor: 'ann', action: 'logout', target: 'ann' }))();
    db.close();
    await nextTurn();
    expect(live).toEqual([]);
  });
});
