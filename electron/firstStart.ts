import crypto from 'node:crypto';
import fs from 'node:fs';
import { hasAnyAccount } from '../server/access/accounts.js';
import { openRetained } from '../server/db/database.js';

// The accounts are the access layer's to read: its own check, for a file the app has not opened yet.
export { hasAnyAccount };

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
