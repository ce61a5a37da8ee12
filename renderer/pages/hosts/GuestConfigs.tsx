import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Time } from '../../components/ui';
import { fetchText, UnifiedDiff } from '../../components/UnifiedDiff';
import { exactTime } from '../../format';
import type { GuestConfigVersion } from '../../../server/contract/operations';


/** A guest's kept config versions (newest first); each shows as a diff against the one before, or whole. */
export function GuestConfigs({ hostId, vmid }: { hostId: number; vmid: number }) {
  const base = `/api/hosts/${hostId}/guests/${vmid}/configs`;
  const [versions, setVersions] = useState<GuestConfigVersion[]>();
  const [shown, setShown] = useState<{ version: GuestConfigVersion; against?: GuestConfigVersion; body: string }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api('GET /api/hosts/:id/guests/:vmid/configs', { params: { id: hostId, vmid } }).then(setVersions, (e) => setError(messageOf(e)));
  }, [hostId, vmid]);
  // A diff names both versions it compares, so the page can label them by when they were received.
  const show = (version: GuestConfigVersion, against?: GuestConfigVersion) =>
    fetchText(against ? `${base}/${version.id}/diff?against=${against.id}` : `${base}/${version.id}`).then(
      (body) => setShown(against ? { version, against, body } : { version, body }),
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
              <button type="button" class="link" onClick={() => void show(v, versions[i + 1])}>
                diff
              </button>
            )}{' '}
            <button type="button" class="link" onClick={() => void show(v)}>
              text
            </button>
          </li>
        ))}
      </ul>
      {shown && (
        <>
          <p class="config-versions" data-testid="config-versions">
            {shown.against ? (
              <>
                Changes from the version received <Received iso={shown.against.received_at} /> (<span class="diff-del">− removed</span>) to the one received{' '}
                <Received iso={shown.version.received_at} /> (<span class="diff-add">+ added</span>)
              </>
            ) : (
              <>
                The version received <Received iso={shown.version.received_at} />
              </>
            )}
          </p>
          <pre class="config-view" data-testid="config-view">
            {shown.against ? <UnifiedDiff text={shown.body} /> : shown.body}
          </pre>
        </>
      )}
    </div>
  );
}

/** A version's received time, exact: two versions a second apart both read "just now" otherwise. */
const Received = ({ iso }: { iso: string }) => <time datetime={iso}>{exactTime(iso)}</time>;
