/** Characters that mean nothing to bash inside a word, anywhere in it (not `~`, which expands after `=` and `:`). */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * One word for a bash script or command line that bash reads back as exactly `value`: left as it is
 * when every character is plain, else in single quotes, each `'` written as `'\''`. Inside single
 * quotes bash expands nothing, so `$`, backticks, `;`, newlines and globs stay text.
 */
export function shellQuote(value: string): string {
  if (PLAIN.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
