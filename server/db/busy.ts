/** SQLite's answer when another connection holds the write lock (server/db/tx.ts `exclusive`). */
export const isBusy = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'SQLITE_BUSY';

/**
 * Upkeep a read does on the side (a session's idle time refreshed, a token's last use noted, an
 * expired row deleted) is skipped while an import holds the database: the next request does it.
 * Returns false when it was skipped.
 */
export function unlessBusy(upkeep: () => void): boolean {
  try {
    upkeep();
    return true;
  } catch (err) {
    if (isBusy(err)) return false;
    throw err;
  }
}
