import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, openRetained } from '../server/db/database.js';
import { accountExistsAt, hasAnyAccount, newSetupToken, startUrl } from './firstStart.js';
import { addAccount } from './testing/accounts.js';

const dirs: string[] = [];
function tempFile(name = 'homefleet.db') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-first-'));
  dirs.push(dir);
  return path.join(dir, name);
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('first start detection', () => {
  it('finds no account in a database without the accounts table', () => {
    const db = openRetained(':memory:');
    expect(hasAnyAccount(db)).toBe(false);
    db.close();
  });

  it('finds no account while the accounts table is empty, and one once a row exists', () => {
    const file = tempFile();
    openDatabase(file).close();
    addAccount(file, { keep: false });
    const db = openRetained(file);
    expect(hasAnyAccount(db)).toBe(false);
    db.close();
    addAccount(file);
    expect(accountExistsAt(file)).toBe(true);
  });

  it('treats a missing database file as first start without creating the file', () => {
    const file = tempFile();
    expect(accountExistsAt(file)).toBe(false);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('makes a fresh 256-bit URL-safe setup token each time', () => {
    const a = newSetupToken();
    const b = newSetupToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('opens the setup page with the token on first start, the dashboard otherwise', () => {
    expect(startUrl('http://127.0.0.1:5000', 'abc_-1')).toBe('http://127.0.0.1:5000/setup?token=abc_-1');
    expect(startUrl('http://127.0.0.1:5000', undefined)).toBe('http://127.0.0.1:5000/');
  });
});
