import { openDatabase } from '../../server/db/database.js';

/**
 * Puts an account into the database file, as the setup page would. The accounts table comes from
 * the access layer's migration; where that migration is not present the table is created with the
 * same required columns, so the insert below works against either schema.
 */
export function addAccount(dbPath: string, { keep = true } = {}): void {
  const db = openDatabase(dbPath);
  try {
    db.exec(`CREATE TABLE IF NOT EXISTS accounts (
      id INTEGER PRIMARY KEY,
      username TEXT NOT NULL UNIQUE,
      display_name TEXT NOT NULL,
      role TEXT NOT NULL,
      password_hash TEXT NOT NULL,
      created_at TEXT NOT NULL
    ) STRICT`);
    if (keep) {
      db.prepare('INSERT INTO accounts (username, display_name, role, password_hash, created_at) VALUES (?, ?, ?, ?, ?)').run(
        'admin',
        'Administrator',
        'administrator',
        'scrypt$not-a-real-hash',
        '2025-01-01T00:00:00Z',
      );
    }
  } finally {
    db.close();
  }
}
