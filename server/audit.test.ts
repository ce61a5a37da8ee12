import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDataContext, type DataContext } from './context.js';
import { openDatabase, type Db } from './db/database.js';
import { systemClock } from './time.js';
import { createAuditLog, type AuditEntry } from './audit.js';
import type { Actor } from './http/request-context.js';

const ANN: Actor = { type: 'user', id: 1, name: 'ann' };
const user = (name: string) => ({ type: 'user', id: name, name });

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
    const data: DataContext = createDataContext(db);
    const live: AuditEntry[] = [];
    data.bus.on('audit.entry', (entry) => live.push(entry));
    return { audit: createAuditLog({ ...data, clock: systemClock }), live, transaction: data.transaction };
  }

  it('announces an entry written outside a transaction at once', () => {
    const { audit, live } = setUp();
    audit.write({ actor: ANN, action: 'logout', subject: user('ann'), summary: 'ann did logout' });
    expect(live.map((e) => [e.action, e.actor])).toEqual([['logout', 'ann']]);
  });

  it('announces an entry of a transaction once it has committed, and never one that rolled back', () => {
    const { audit, live, transaction } = setUp();
    transaction(() => {
      audit.write({ actor: ANN, action: 'user.create', subject: user('bob'), summary: 'ann did user.create' });
      expect(live).toEqual([]);
    })();
    expect(() =>
      transaction(() => {
        audit.write({ actor: ANN, action: 'user.update', subject: user('bob'), summary: 'ann did user.update' });
        throw new Error('the change failed after its audit row');
      })(),
    ).toThrow('failed after its audit row');
    // The rolled-back entry's id is free again: the next entry may take it, and is still announced as itself.
    transaction(() => audit.write({ actor: ANN, action: 'user.revoke_sessions', subject: user('bob'), summary: 'ann did user.revoke_sessions' }))();
    expect(live.map((e) => e.action)).toEqual(['user.create', 'user.revoke_sessions']);
    expect(audit.list(10).map((e) => e.id)).toEqual([...live].reverse().map((e) => e.id));
  });

  it('drops the entries of a nested transaction that rolled back, and keeps the outer one', () => {
    const { audit, live, transaction } = setUp();
    const inner = transaction(() => {
      audit.write({ actor: ANN, action: 'user.update', subject: user('bob'), summary: 'ann did user.update' });
      throw new Error('inner change refused');
    });
    transaction(() => {
      audit.write({ actor: ANN, action: 'user.create', subject: user('bob'), summary: 'ann did user.create' });
      expect(() => inner()).toThrow('inner change refused');
    })();
    expect(live.map((e) => e.action)).toEqual(['user.create']);
    expect(audit.list(10).map((e) => e.action)).toEqual(['user.create']);
  });
});
