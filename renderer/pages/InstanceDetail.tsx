import { useState } from 'preact/hooks';
import { api, messageOf } from '../api';
import { Badge, Empty, Loading, Notice, PageTitle, Time, useLoad } from '../components/ui';
import { parseAt, vmidAt } from '../asOf';
import { exactTime, historyChange } from '../format';
import { useFlash, useLive } from '../live';
import { navigate, useLocation } from '../router';
import { useSession } from '../session';
import { DeployedFrom } from './DeployedFrom';
import { InstanceBackups } from './InstanceBackups';
import { Flags } from './Instances';
import { TagChips } from '../components/Tags';

const PRODUCTION_RULE = 'Production instances cannot be deleted. Change the stack to development first, then delete.';

export function InstanceDetailPage({ vmid }: { vmid: string }) {
  const session = useSession();
  const instance = useLoad(() => api('GET /api/instances/:vmid', { params: { vmid } }), [vmid]);
  const history = useLoad(() => api('GET /api/instances/:vmid/history', { params: { vmid } }), [vmid]);
  // As of a point of its timeline (?at=): the server's rebuild of the instance then, asked for by the vmid it had then.
  const at = parseAt(new URLSearchParams(useLocation().search).get('at'));
  const thenVmid = at && instance.data && history.data ? vmidAt(history.data, instance.data.vmid, at) : undefined;
  const past = useLoad(
    () => (thenVmid === undefined ? Promise.resolve(undefined) : api('GET /api/instances/:vmid', { params: { vmid: thenVmid }, query: { at } })),
    [at, thenVmid],
  );
  const [confirming, setConfirming] = useState(false);
  const [deleteError, setDeleteError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [gone, setGone] = useState(false);
  const [flashing, flash] = useFlash();
  useLive(['instance.updated', 'instance.deleted', 'reset'], ({ type, data }) => {
    const current = instance.data?.vmid ?? Number(vmid);
    if (type === 'reset') {
      instance.reload();
      history.reload();
    } else if (type === 'instance.deleted' && data.vmid === current) {
      setGone(true);
    } else if (type === 'instance.updated' && data.previous_vmid === current) {
      if (data.instance.vmid !== current) navigate(`/instances/${data.instance.vmid}`, { replace: true });
      else {
        // The event carries the instance without its deploy spec, which a field change leaves as it was.
        instance.update((was) => ({ ...data.instance, deploy: was?.deploy ?? null }));
        history.reload();
        flash('details');
      }
    }
  });

  if (instance.error) return <Notice kind="error">{instance.error}</Notice>;
  if (!instance.data) return <Loading />;
  const item = instance.data;
  const production = item.stack === 'production';
  // The details shown: the instance now, or as it was at `at` (undefined while that loads or when it did not exist then).
  const shown = at ? past.data : item;
  if (gone) {
    return (
      <section>
        <p class="crumbs">
          <a href="/instances">Instances</a> / {item.vmid}
        </p>
        <PageTitle title={item.name} />
        <Notice kind="warning">
          <span data-testid="instance-deleted">This instance was deleted</span> while you were looking at it. Go back to the <a href="/instances">instances</a>.
        </Notice>
      </section>
    );
  }

  async function remove() {
    setBusy(true);
    setDeleteError(undefined);
    try {
      await api('DELETE /api/instances/:vmid', { params: { vmid: item.vmid } });
      navigate('/instances');
    } catch (e) {
      setDeleteError(messageOf(e));
      setConfirming(false);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section>
      <p class="crumbs">
        <a href="/instances">Instances</a> / {item.vmid}
      </p>
      <PageTitle title={item.name}>
        {session.can('fleet.operate') && !at && (
          <a class="button" href={`/instances/${item.vmid}/edit`}>
            Edit
          </a>
        )}
      </PageTitle>
      {at && (
        <Notice kind="info">
          <strong data-testid="as-of-banner">Showing this instance as it was on {exactTime(at)}</strong>, rebuilt from its history; nothing can
          be changed here. <a href={`/instances/${item.vmid}`}>Back to now</a>
        </Notice>
      )}
      <div class="detail-grid">
        <div class={`card${flashing.has('details') ? ' flash' : ''}`} data-testid="details">
          <h2>{at ? 'Details then' : 'Details'}</h2>
          {at && past.error && <Notice kind="warning">Not in the registry then: {past.error}</Notice>}
          {at && !past.data && !past.error && <Loading />}
          {shown && (
            <dl class="props">
              <dt>Name</dt>
              <dd data-testid="name">{shown.name}</dd>
              <dt>VMID</dt>
              <dd>{shown.vmid}</dd>
              <dt>State</dt>
              <dd>
                <Badge value={shown.state} />
              </dd>
              <dt>Stack</dt>
              <dd>{shown.stack}</dd>
              <dt>Runs on</dt>
              <dd data-testid="runs-on">
                {at ? (
                  <span class="muted">not kept in history</span>
                ) : item.host ? (
                  <>
                    <a href={`/hosts/${item.host.id}`}>{item.host.name}</a> <span class="muted">({item.guest_status || 'unknown'})</span>
                  </>
                ) : (
                  <span class="muted">no host reports it</span>
                )}
              </dd>
              <dt>Tailscale IP</dt>
              <dd class="mono">{shown.tailscale_ip || '—'}</dd>
              <dt>Tailnet IPv6</dt>
              <dd class="mono address" data-testid="tailnet-ipv6">
                {shown.tailscale_ipv6 || <span class="muted">{at ? 'not kept in history' : '—'}</span>}
              </dd>
              <dt>Services</dt>
              <dd>
                <Flags instance={shown} />
              </dd>
              <dt>Tags</dt>
              <dd data-testid="instance-tags">
                <TagChips tags={shown.tags} />
              </dd>
              <dt>Created</dt>
              <dd>
                <Time iso={shown.created_at} />
              </dd>
              <dt>Updated</dt>
              <dd>
                <Time iso={shown.updated_at} />
              </dd>
            </dl>
          )}
          {session.can('fleet.operate') && !at && (
            <div class="danger-zone">
              <h3>Delete</h3>
              <p class="hint" id="delete-rule">
                {production ? PRODUCTION_RULE : 'Deleting removes the instance and its change history.'}
              </p>
              {deleteError && <Notice kind="error">{deleteError}</Notice>}
              {production ? (
                // Not offered and then refused: the server answers 422 for a production instance.
                <button type="button" class="danger" disabled aria-describedby="delete-rule">
                  Delete instance
                </button>
              ) : confirming ? (
                <div class="confirm">
                  <span>Delete {item.name} and its history?</span>
                  <button type="button" class="danger" disabled={busy} onClick={remove}>
                    {busy ? 'Deleting…' : 'Yes, delete'}
                  </button>
                  <button type="button" onClick={() => setConfirming(false)}>
                    Cancel
                  </button>
                </div>
              ) : (
                <button type="button" class="danger" aria-describedby="delete-rule" onClick={() => setConfirming(true)}>
                  Delete instance
                </button>
              )}
            </div>
          )}
        </div>
        <div class="card">
          <h2>Change timeline</h2>
          {history.error && <Notice kind="error">{history.error}</Notice>}
          {!history.data && !history.error && <Loading />}
          {history.data?.length === 0 && <Empty title="No changes recorded" />}
          {history.data && history.data.length > 0 && (
            <ol class="timeline" aria-label="Change timeline">
              {history.data.map((entry) => (
                <li key={entry.id} data-field={entry.field} class={entry.changed_at === at ? 'selected' : undefined} aria-current={entry.changed_at === at ? 'true' : undefined}>
                  <div class="what">
                    {entry.field === 'created' ? (
                      <strong>Created</strong>
                    ) : entry.field === 'imported' ? (
                      <strong>Imported from a backup</strong>
                    ) : (
                      <Change field={entry.field} from={entry.old_value} to={entry.new_value} />
                    )}
                  </div>
                  <div class="meta">
                    by <span class="who">{entry.changed_by ?? 'unknown'}</span> · <Time iso={entry.changed_at} /> ·{' '}
                    <a href={`/instances/${item.vmid}?at=${encodeURIComponent(entry.changed_at)}`} class="as-of" title="The instance's fields as they were right after this change">
                      as of this change
                    </a>
                  </div>
                </li>
              ))}
            </ol>
          )}
        </div>
      </div>
      {item.deploy && !at && <DeployedFrom spec={item.deploy} />}
      {!at && <InstanceBackups vmid={String(item.vmid)} />}
    </section>
  );
}

/** "Argus: off → on", "State: deployed → testing". */
function Change({ field, from, to }: { field: string; from: string | null; to: string | null }) {
  const change = historyChange(field, from, to);
  return (
    <>
      <strong class="field-name" title={field}>
        {change.label}:
      </strong>{' '}
      <span class="old">{change.from}</span> <span aria-label="changed to">→</span> <span class="new">{change.to}</span>
    </>
  );
}
