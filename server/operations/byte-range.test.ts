import { describe, expect, it } from 'vitest';
import { parseByteRange } from './byte-range.js';

describe('parseByteRange (RFC 9110, one range)', () => {
  it('reads N-, N-M and -S, cutting an end past the file to its last byte', () => {
    expect(parseByteRange('bytes=0-', 10)).toEqual({ start: 0, end: 9 });
    expect(parseByteRange('bytes=4-', 10)).toEqual({ start: 4, end: 9 });
    expect(parseByteRange('bytes=2-5', 10)).toEqual({ start: 2, end: 5 });
    expect(parseByteRange('bytes=2-500', 10)).toEqual({ start: 2, end: 9 });
    expect(parseByteRange('bytes=9-9', 10)).toEqual({ start: 9, end: 9 });
    expect(parseByteRange('bytes=-3', 10)).toEqual({ start: 7, end: 9 });
    expect(parseByteRange('bytes=-30', 10)).toEqual({ start: 0, end: 9 });
  });

  it('says unsatisfiable for a range that starts at or past the end', () => {
    expect(parseByteRange('bytes=10-', 10)).toBe('unsatisfiable');
    expect(parseByteRange('bytes=11-20', 10)).toBe('unsatisfiable');
    expect(parseByteRange('bytes=0-', 0)).toBe('unsatisfiable');
    expect(parseByteRange('bytes=-0', 10)).toBe('unsatisfiable');
  });

  it('ignores no header, other units, several ranges and ranges that are not ranges', () => {
    for (const header of [undefined, '', 'bytes=', 'bytes=-', 'items=0-1', 'bytes=0-1,3-4', 'bytes=5-2', 'bytes=a-', 'bytes=1.5-', 'bytes=99999999999999999-']) {
      expect(parseByteRange(header, 10), String(header)).toBeUndefined();
    }
  });
});
