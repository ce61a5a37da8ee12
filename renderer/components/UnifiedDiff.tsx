/** A version's text or a unified diff, as the server sends them (text/plain); a refusal says why (a diff too large to show is a 422). */
export async function fetchText(path: string): Promise<string> {
  const res = await fetch(path, { credentials: 'same-origin' });
  if (!res.ok) throw new Error(((await res.json().catch(() => ({}))) as { error?: string }).error ?? `The server answered ${res.status}.`);
  return res.text();
}

/** Added and removed lines coloured; the file and hunk headers (---, +++, @@) are neither. */
function lineClass(line: string): string | undefined {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-head';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  return undefined;
}

/** A unified diff, a line each. */
export function UnifiedDiff({ text }: { text: string }) {
  return (
    <>
      {text
        .replace(/\n$/, '')
        .split('\n')
        .map((line, i) => (
          <div key={i} class={lineClass(line)}>
            {line || ' '}
          </div>
        ))}
    </>
  );
}
