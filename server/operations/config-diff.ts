import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';

/**
 * A diff that changes more lines than this is not one a person reads; it is also where the cost
 * is: Myers' diff takes time in the square of the lines changed (two 64 KiB configs with no line in
 * common took 449 s and held the event loop the whole time).
 */
export const MAX_CHANGED_LINES = 1_000;
/**
 * A last guard: the work is bounded by MAX_CHANGED_LINES (Myers' steps grow with the lines times the
 * edit length), so a diff within it ends on its own; this only stops a pathological one. It is not
 * the bound that decides whether a diff is shown: at 3 s, a 1,000-line diff shown on a quiet machine
 * was given up on a loaded one.
 */
export const DIFF_TIMEOUT_MS = 30_000;

const lines = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/**
 * At least how many lines a diff of the two texts removes and adds: the lines one has more often
 * than the other. Counted in one pass, it turns away texts with little in common before any diffing.
 */
export function fewestChangedLines(from: string, to: string): number {
  const counts = new Map<string, number>();
  for (const line of lines(from)) counts.set(line, (counts.get(line) ?? 0) + 1);
  let changed = 0;
  for (const line of lines(to)) {
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    else changed++;
  }
  for (const left of counts.values()) changed += left;
  return changed;
}

export interface DiffSide {
  /** The file name the diff shows (`a/101.conf (received …)`, or `/dev/null`). */
  label: string;
  text: string;
}

/**
 * A unified diff of `from` to `to` (only the `---`/`+++` file lines as its header), or undefined when
 * the two differ by more than MAX_CHANGED_LINES (or, pathologically, the diff takes longer than DIFF_TIMEOUT_MS).
 * The diff runs in steps, each its own turn of the event loop (the `diff` library's callback form),
 * so requests are answered while it runs.
 */
export function unifiedDiff(from: DiffSide, to: DiffSide): Promise<string | undefined> {
  if (fewestChangedLines(from.text, to.text) > MAX_CHANGED_LINES) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    createTwoFilesPatch(from.label, to.label, from.text, to.text, undefined, undefined, {
      context: 3,
      maxEditLength: MAX_CHANGED_LINES,
      timeout: DIFF_TIMEOUT_MS,
      headerOptions: FILE_HEADERS_ONLY,
      callback: resolve,
    });
  });
}
