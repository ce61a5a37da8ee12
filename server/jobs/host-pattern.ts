/**
 * Expands Ansible host ranges: `web[01:03]` → web01, web02, web03 (leading zeros kept),
 * `db-[a:c]` → db-a, db-b, db-c, an optional step `[1:9:2]`, several ranges in one name.
 * A bracket that is not a valid range is kept as written.
 */
export function expandHostPattern(pattern: string, limit = 10_000): string[] {
  const match = /\[([0-9]+|[a-zA-Z]):([0-9]+|[a-zA-Z])(?::([0-9]+))?\]/.exec(pattern);
  if (!match) return [pattern];
  const [whole, from, to, stepText] = match as unknown as [string, string, string, string | undefined];
  const before = pattern.slice(0, match.index);
  const after = pattern.slice(match.index + whole.length);
  const step = stepText === undefined ? 1 : Number(stepText);
  const values = rangeValues(from, to, step);
  if (!values) return [pattern];
  const out: string[] = [];
  for (const value of values) {
    for (const rest of expandHostPattern(after, limit)) {
      out.push(before + value + rest);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

function rangeValues(from: string, to: string, step: number): string[] | undefined {
  if (step < 1) return undefined;
  const numeric = /^[0-9]+$/;
  if (numeric.test(from) && numeric.test(to)) {
    const start = Number(from);
    const end = Number(to);
    if (end < start) return undefined;
    const width = from.length > 1 && from.startsWith('0') ? from.length : 0;
    const values: string[] = [];
    for (let n = start; n <= end; n += step) values.push(String(n).padStart(width, '0'));
    return values;
  }
  if (numeric.test(from) || numeric.test(to)) return undefined;
  const start = from.charCodeAt(0);
  const end = to.charCodeAt(0);
  if (end < start) return undefined;
  const values: string[] = [];
  for (let c = start; c <= end; c += step) values.push(String.fromCharCode(c));
  return values;
}
