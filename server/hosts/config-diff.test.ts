import { describe, expect, it } from 'vitest';
import { fewestChangedLines, MAX_CHANGED_LINES, unifiedDiff } from './config-diff.js';

const numbered = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}: value\n`).join('');

describe('fewestChangedLines', () => {
  it('counts the lines one text has more often than the other', () => {
    expect(fewestChangedLines('a\nb\nc\n', 'a\nb\nc\n')).toBe(0);
    expect(fewestChangedLines('a\nb\nc\n', 'c\nb\na\n')).toBe(0);
    expect(fewestChangedLines('a\nb\n', 'a\nx\ny\n')).toBe(3);
    expect(fewestChangedLines('a\na\n', 'a\n')).toBe(1);
    expect(fewestChangedLines('', 'a\n')).toBe(1);
  });
});

describe('unifiedDiff', () => {
  it('shows the two files by their labels and the changed lines with 3 lines of context', async () => {
    const from = numbered('key', 10);
    const to = from.replace('key5: value', 'key5: changed');
    expect(await unifiedDiff({ label: 'a/1.conf (received x)', text: from }, { label: 'b/1.conf (received y)', text: to })).toBe(
      ['--- a/1.conf (received x)', '+++ b/1.conf (received y)', '@@ -3,7 +3,7 @@', ' key2: value', ' key3: value', ' key4: value', '-key5: value', '+key5: changed', ' key6: value', ' key7: value', ' key8: value', ''].join('\n'),
    );
  });

  it('gives up at once on texts with too few lines in common, and within its bounds on lines in another order', async () => {
    const started = Date.now();
    expect(await unifiedDiff({ label: 'a', text: numbered('a', 3000) }, { label: 'b', text: numbered('b', 3000) })).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(200);
    // The same lines reversed: nothing to turn away up front, so the diff itself stops at its bound.
    const lines = numbered('k', 3000);
    const reversed = lines.trimEnd().split('\n').reverse().join('\n') + '\n';
    expect(fewestChangedLines(lines, reversed)).toBe(0);
    const gaps: number[] = [];
    let last = Date.now();
    const tick = setInterval(() => (gaps.push(Date.now() - last), (last = Date.now())), 10);
    expect(await unifiedDiff({ label: 'a', text: lines }, { label: 'b', text: reversed })).toBeUndefined();
    clearInterval(tick);
    expect(Math.max(...gaps)).toBeLessThan(250);
    // Just within the bound it is shown.
    const within = numbered('k', MAX_CHANGED_LINES / 2);
    expect(await unifiedDiff({ label: 'a', text: within }, { label: 'b', text: within.replaceAll('value', 'other') })).toContain('+k0: other');
  }, 20_000);
});
