import crypto from 'node:crypto';
import fs from 'node:fs';
import { openRetained, type Db } from '../server/db/database.js';

/**
 * Whether the database holds at least one account. The accounts table comes with the access
 * layer's migration; a database from before it (or a fresh one) has no account.
 */
export function hasAnyAccount(db: Db): boolean {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'accounts'").get();
  if (table === undefined) return false;
  return db.prepare('SELECT 1 FROM accounts LIMIT 1').get() !== undefined;
}

/**
 * Looks into the database file before the app opens it, because the setup token is part of the
 * app's configuration. A missing file means first start; the probe never creates or migrates one.
 */
export function accountExistsAt(dbPath: string): boolean {
  if (!fs.existsSync(dbPath)) return false;
  const db = openRetained(dbPath, { fileMustExist: true });
  try {
    return hasAnyAccount(db);
  } finally {
    db.close();
  }
}

/** A one-time setup token: 256 random bits, URL-safe. */
export function newSetupToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** The first page: the setup form with its token filled in, or the dashboard. */
export function startUrl(origin: string, setupToken: string | undefined): string {
  if (setupToken === undefined) return `${origin}/`;
  return `${origin}/setup?token=${encodeURIComponent(setupToken)}`;
}
