import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../../api';
import { Confirm, Loading, Notice, PageTitle, Time, useLoad } from '../../components/ui';
import { plural, uptime } from '../../format';
import { useSession } from '../../session';
import type { DriftItem, HostDetail } from '../../../server/hosts/schema';
import { useLiveHosts, withEvent } from './live';
import { StatusDot, Upgrade } from './parts';
import { Removal } from './Removal';

const DRIFT_TEXT: Record<DriftItem['kind'], (item: DriftItem) => string> = {
  guest_without_instance: (i) => `Guest “${(i as { guest_name: string }).guest_name}” has no instance in the registry`,
  name_differs: (i) => {
    const d = i as { guest_name: string; instance_name: string };
    return `Registry says “${d.instance_name}”, the host says “${d.guest_name}”`;
  },
  instance_without_guest: (i) => `Instance “${(i as { instance_name: string }).instance_name}” runs on no reporting host`,
  conflict: (i) => `Also reported by ${(i as { other_hosts: { hostname: string }[] }).other_hosts.map((h) => h.hostname).join(', ')}: not applied`,
};

export function HostDetailPage({ id }: { id: string }) {
  const session = useSession();
  const host = useLoad(() => api<HostDetail>('GET', `/api/hosts/${encodeURIComponent(id)}`), [id]);
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();
  const [confirming, setConfirming] = useState(false);
  const [confirmingAll, setConfirmingAll] = useState(false);
  const shipped = useShippedAgent();
  // What an action said holds until the host changes state: a removal that completes is then told by the Removal section.
  const status = host.data?.status;
  useEffect(() => setMessage(undefined), [status]);
  useLiveHosts(
    (hostId) => String(hostId) === id,
    (event) => {
      host.update((h) => withEvent(h, event));
      return true;
    },
    host.reload,
  );

  if (host.error) return <Notice kind="error">{host.error}</Notice>;
  if (!host.data) return <Loading />;
  const h = host.data;
  const manage = session.can('hosts.manage') && h.status !== 'deleted';
  const operate = session.can('fleet.operate') && h.status !== 'deleted';

  /** Runs an action; `done` is said afterwards unless the page shows the outcome itself (the Removal section). */
  async function act(action: () => Promise<unknown>, done?: string) {
    setMessage(undefined);
    try {
      await action();
      if (done) setMessage({ kind: 'success', text: done });
    } catch (e) {
      setMessage({ kind: 'error', text: messageOf(e) });
    }
    host.reload();
  }

  const apply = (body: unknown) =>
    act(async () => {
      const result = await api<{ applied: unknown[]; skipped: { vmid: number; error: string }[] }>('POST', `/api/hosts/${h.id}/drift/apply`, body);
      if (result.skipped.length) throw new ApiError(200, `Not applied: ${result.skipped.map((s) => `VMID ${s.vmid}: ${s.error.replace(/^vmid\b/, 'VMID')}`).join('; ')}.`);
    }, 'Applied to the registry.');
  const applicable = h.drift.filter((d) => d.kind !== 'instance_without_guest' && d.kind !== 'conflict');
  const creates = applicable.filter((d) => d.kind === 'guest_without_instance').length;
  const upgradable = h.upgrade_available;
  // Guests with no instance have no registry page to link to.
  const unregistered = new Set(h.drift.filter((d) => d.kind === 'guest_without_instance').map((d) => d.vmid));

  return (
    <section>
      <p class="crumbs">
        <a href="/hosts">Hosts</a> / {h.hostname}
      </p>
      <PageTitle title={h.hostname}>
        <StatusDot status={h.status} />
      </PageTitle>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      <div class="detail-grid">
        <div class="card">
          <h2>Facts</h2>
          <dl class="props">
            <dt>Last heartbeat</dt>
            <dd>
              <Time iso={h.last_heartbeat_at} />
            </dd>
            <dt>Agent</dt>
            <dd>
              <span class="mono">{h.agent_version}</span>
              {upgradable === false && <span class="muted"> (the newest this server ships)</span>}
              {upgradable === true && shipped && <span class="muted"> ({shipped} is available)</span>}
            </dd>
            <dt>Upgrade</dt>
            <dd>
              <Upgrade upgrade={h.upgrade} />
            </dd>
            <dt>Hypervisor</dt>
            <dd>{h.hypervisor_version || '—'}</dd>
            <dt>Addresses</dt>
            <dd class="mono">{h.addresses.join(', ') || '—'}</dd>
            <dt>Uptime</dt>
            <dd data-testid="uptime">{h.uptime_s === null ? '—' : uptime(h.uptime_s)}</dd>
            <dt>Machine id</dt>
            <dd class="mono">{h.machine_id}</dd>
            <dt>Enrolled</dt>
            <dd>
              <Time iso={h.enrolled_at} />
            </dd>
            <dt>Sync registry</dt>
            <dd>
              {manage ? (
                <label class="check">
                  <input
                    type="checkbox"
                    checked={h.sync_registry}
                    onChange={(e) => {
                      const next = e.currentTarget.checked;
                      void act(() => api('PATCH', `/api/hosts/${h.id}`, { sync_registry: next }), next ? 'Drift is applied on every heartbeat.' : 'Drift is only shown.');
                    }}
                  />
                  apply drift on every heartbeat
                </label>
              ) : h.sync_registry ? (
                'on'
              ) : (
                'off'
              )}
            </dd>
          </dl>
          {manage && h.status !== 'deleting' && (
            <div class="form-actions">
              {upgradable && (
                <button type="button" onClick={() => act(() => api('POST', `/api/hosts/${h.id}/upgrade`, {}), 'Upgrade requested; it is offered at the next heartbeat.')}>
                  Upgrade agent
                </button>
              )}
              <button type="button" onClick={() => act(() => api('POST', `/api/hosts/${h.id}/revoke-token`), 'Host token revoked. Re-run the install command on the host to enroll it again.')}>
                Revoke host token
              </button>
            </div>
          )}
          <Removal host={h} manage={manage} confirming={confirming} setConfirming={setConfirming} act={act} />
        </div>
        <div>
          <div class="card">
            <h2>Drift against the registry</h2>
            {h.drift.length === 0 && <p class="muted">The registry matches this host.</p>}
            {h.drift.length > 0 && (
              <ul class="drift">
                {h.drift.map((item) => (
                  <li key={`${item.kind}-${item.vmid}`} data-drift={item.kind} data-vmid={item.vmid}>
                    <span class="mono">{item.vmid}</span> {DRIFT_TEXT[item.kind](item)}{' '}
                    {operate && item.kind !== 'instance_without_guest' && item.kind !== 'conflict' && (
                      <button type="button" onClick={() => apply({ items: [{ vmid: item.vmid }] })}>
                        {item.kind === 'guest_without_instance' ? 'Create instance' : 'Rename instance'}
                      </button>
                    )}
                  </li>
                ))}
              </ul>
            )}
            {operate && applicable.length > 1 && !confirmingAll && (
              <button type="button" class="primary" onClick={() => setConfirmingAll(true)}>
                Apply all…
              </button>
            )}
            {operate && applicable.length > 1 && confirmingAll && (
              <Confirm
                label={`Confirm applying all drift from ${h.hostname}`}
                question={`Apply all ${applicable.length} changes from ${h.hostname} to the registry? ${[
                  creates ? `${plural(creates, 'instance')} created` : '',
                  applicable.length - creates ? `${plural(applicable.length - creates, 'instance')} renamed` : '',
                ]
                  .filter(Boolean)
                  .join(', ')}, as the host reports them.`}
                action={`Apply ${applicable.length} changes`}
                danger={false}
                onConfirm={() => {
                  setConfirmingAll(false);
                  void apply({ all: true });
                }}
                onCancel={() => setConfirmingAll(false)}
              />
            )}
          </div>
          <div class="card">
            <h2>Guests ({h.guests.length})</h2>
            {h.guests.length === 0 ? (
              <p class="muted">No guests reported.</p>
            ) : (
              <div class="table-wrap">
                <table class="guests">
                  <thead>
                    <tr>
                      <th scope="col">VMID</th>
                      <th scope="col">Name</th>
                      <th scope="col">Type</th>
                      <th scope="col">Status</th>
                    </tr>
                  </thead>
                  <tbody>
                    {h.guests.map((g) => (
                      <tr key={g.vmid} data-guest={g.vmid}>
                        <td>{unregistered.has(g.vmid) ? g.vmid : <a href={`/instances/${g.vmid}`}>{g.vmid}</a>}</td>
                        <td>{g.name}</td>
                        <td>{g.type}</td>
                        <td>{g.status}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </div>
        </div>
      </div>
    </section>
  );
}

/**
 * The agent version this server ships (the signed manifest's current one), for "Upgrade agent": read
 * once per page; undefined until known or when the server ships none.
 */
function useShippedAgent(): string | undefined {
  const manifest = useLoad(() => api<{ agents?: { version: string }[] }>('GET', '/api/agent/releases/manifest.json'), []);
  return manifest.data?.agents?.[0]?.version;
}
