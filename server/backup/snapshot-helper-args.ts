/**
 * The snapshot helper's optional fourth argument (after `<source> <dest>`): nobody waits for its
 * check (an import waits only for the copy), so it runs the check at the lowest CPU priority. Its own
 * module, as the helper is an entry point of its own and must not load the copier.
 */
export const CHECK_AT_LOW_PRIORITY = '--check-at-low-priority';
