import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Loading, Notice, PageTitle, Time, useLoad } from '../../components/ui';
import { uptime } from '../../format';
import { useSession } from '../../session';
import { AgentActions, useShippedAgents } from './Agent';
import { AgentSettingsCard } from './AgentSettings';
import { DeployButton } from './DeployDialog';
import { DriftCard } from './Drift';
import { GuestsCard } from './Guests';
import { HostToken } from './HostToken';
import { useLiveHosts, withEvent } from './live';
import { MaintenanceCard } from './Maintenance';
import { OperationsCard } from './Operations';
import { useLiveOperations, withOperation } from './operationLive';
import { isLive, StatusDot, Upgrade, type Act } from './parts';
import { Removal } from './Removal';
import { StorageCard } from './Storage';
import { useLatestMetrics } from './figures';
import { Lazy } from '../../components/Lazy';

/** The charts and uPlot are a chunk of their own, fetched once the host page shows them. */
const loadCharts = () => import('./Metrics').then((m) => m.HostCharts);

export function HostDetailPage({ id }: { id: string }) {
  const session = useSession();
  const host = useLoad(() => api('GET /api/hosts/:id', { params: { id } }), [id]);
  const operations = useLoad(() => api('GET /api/operations', { query: { host_id: id, limit: 100 } }), [id]);
  const policy = useLoad(() => api('GET /api/hosts/:id/maintenance', { params: { id } }), [id]);
  useLiveOperations(Number(id), (op) => operations.update((list) => withOperation(list, op)), operations.reload);
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();
  const shipped = useShippedAgents();
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

  const latest = useLatestMetrics(Number(id));

  if (host.error) return <Notice kind="error">{host.error}</Notice>;
  if (!host.data) return <Loading />;
  const h = host.data;
  // Only a host that still reports can be changed; a deleted one is kept for the record.
  const manage = session.can('hosts.manage') && isLive(h);
  const operate = session.can('fleet.operate') && h.status !== 'deleted';

  /** Runs an action; `done` is said afterwards unless the page shows the outcome itself (the Removal section). */
  const act: Act = async (action, done) => {
    setMessage(undefined);
    try {
      await action();
      if (done) setMessage({ kind: 'success', text: done });
    } catch (e) {
      setMessage({ kind: 'error', text: messageOf(e) });
    }
    host.reload();
  };

  const can = {
    operate,
    force: session.can('settings.manage'),
    diagnostics: session.can('diagnostics.read') && h.status !== 'deleted',
  };

  return (
    <section>
      <p class="crumbs">
        <a href="/hosts">Hosts</a> / {h.hostname}
      </p>
      <PageTitle title={h.hostname}>
        <StatusDot status={h.status} />
        {operate && <DeployButton host={h} metrics={latest} diagnostics={can.diagnostics} />}
      </PageTitle>
      {h.status === 'deleted' && (
        <Notice kind="info">
          <span data-testid="host-deleted">
            {h.hostname} was removed{h.deleted_at ? <> <Time iso={h.deleted_at} /></> : ''}. It no longer reports and nothing here can be changed; the page is kept for
            the record.
          </span>
        </Notice>
      )}
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
              {h.upgrade_available === false && isLive(h) && (
                <span class="muted"> ({h.agent_pin ? `pinned to ${h.agent_pin}` : `the newest this server ships on the ${h.agent_channel} channel`})</span>
              )}
              {h.upgrade_available === true && h.upgrade_to && <span class="muted"> ({h.upgrade_to} is available)</span>}
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
                      void act(() => api('PATCH /api/hosts/:id', { params: { id: h.id }, body: { sync_registry: next } }), next ? 'Drift is applied on every heartbeat.' : 'Drift is only shown.');
                    }}
                  />
                  apply drift on every heartbeat (never a production rename or a conflict)
                </label>
              ) : h.sync_registry ? (
                'on'
              ) : (
                'off'
              )}
            </dd>
          </dl>
          {manage && <AgentActions host={h} shipped={shipped} act={act} />}
          {manage && <HostToken host={h} reload={host.reload} />}
          <Removal host={h} manage={session.can('hosts.manage')} act={act} />
        </div>
        <div>
          <DriftCard host={h} operate={operate} reload={host.reload} />
          <AgentSettingsCard host={h} shipped={shipped} manage={manage} onSaved={(saved) => host.update(() => saved)} />
        </div>
      </div>
      <GuestsCard host={h} operations={operations.data ?? []} policy={policy.data} can={can} metrics={latest} />
      {h.status !== 'deleted' && <StorageCard host={h} manage={manage} diagnostics={can.diagnostics} />}
      <div class="detail-grid">
        <OperationsCard host={h} operations={operations.data ?? []} can={can} />
        <MaintenanceCard hostId={h.id} policy={policy.data} manage={session.can('settings.manage') && isLive(h)} onSaved={(p) => policy.update(() => p)} />
      </div>
      {h.status !== 'deleted' && <Lazy load={loadCharts} props={{ hostId: h.id }} />}
    </section>
  );
}
