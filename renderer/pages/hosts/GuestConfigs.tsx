import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Time } from '../../components/ui';
import type { GuestConfigVersion } from '../../../server/contract/operations';

/** The unified diff (or the text) of a kept version, as plain text. */
async function text(path: string): Promise<string> {
  const res = await fetch(path, { credentials: 'same-origin' });
  // A diff too large to show is a 422 that says so.
  if (!res.ok) throw new Error(((await res.json().catch(() => ({}))) as { error?: string }).error ?? `The server answered ${res.status}.`);
  return res.text();
}

/** A guest's kept config versions (newest first); each shows as a diff against the one before, or whole. */
export function GuestConfigs({ hostId, vmid }: { hostId: number; vmid: number }) {
  const base = `/api/hosts/${hostId}/guests/${vmid}/configs`;
  const [versions, setVersions] = useState<GuestConfigVersion[]>();
  const [shown, setShown] = useState<{ id: number; mode: 'diff' | 'text'; body: string }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api<GuestConfigVersion[]>('GET', base).then(setVersions, (e) => setError(messageOf(e)));
  }, [base]);
  const show = (id: number, mode: 'diff' | 'text') =>
    text(mode === 'diff' ? `${base}/${id}/diff` : `${base}/${id}`).then(
      (body) => setShown({ id, mode, body }),
      (e: Error) => setError(e.message),
    );
  if (error) return <p class="error">{error}</p>;
  if (!versions) return <p class="muted">Loading configs…</p>;
  if (versions.length === 0) return <p class="muted">The agent has not sent this guest’s config yet.</p>;
  return (
    <div class="configs" data-testid={`configs-${vmid}`}>
      <ul class="plain">
        {versions.map((v, i) => (
          <li key={v.id}>
            <Time iso={v.received_at} /> <span class="muted">{v.size} bytes</span>{' '}
            {i < versions.length - 1 && (
              <button type="button" class="link" onClick={() => void show(v.id, 'diff')}>
                diff
              </button>
            )}{' '}
            <button type="button" class="link" onClick={() => void show(v.id, 'text')}>
              text
            </button>
          </li>
        ))}
      </ul>
      {shown && (
        <pre class="config-view" data-testid="config-view">
          {shown.mode === 'diff'
            ? shown.body.split('\n').map((line) => <div class={line.startsWith('+') && !line.startsWith('+++') ? 'diff-add' : line.startsWith('-') && !line.startsWith('---') ? 'diff-del' : undefined}>{line}</div>)
            : shown.body}
        </pre>
      )}
    </div>
  );
}
