/** The bytes a `Range` header asks of a file of `size` bytes, both ends included. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * RFC 9110 §14.1.2 for one range: `bytes=N-`, `bytes=N-M` (M past the end is cut to it) and
 * `bytes=-S` (the last S bytes). `undefined`: no header, or one that is not a single valid byte range,
 * which the server ignores and sends the whole file (as it may for several ranges);
 * `unsatisfiable`: a range that starts at or past the end (416).
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d{0,16})-(\d{0,16})$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1) };
}
