import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Empty, Loading, Notice, PageTitle, Time, useLoad } from '../../components/ui';
import { interval } from '../../format';
import { useFlash } from '../../live';
import { useSession } from '../../session';
import { AddHost, EnrollmentTokens } from './Enrollment';
import { useLiveHosts, withEvent } from './live';
import { StatusDot, Upgrade } from './parts';

export function HostsPage() {
  const session = useSession();
  const hosts = useLoad(() => api('GET /api/hosts'), []);
  const tokens = useLoad(() => api('GET /api/hosts/enrollment-tokens'), []);
  const [adding, setAdding] = useState(false);
  const [flashed, flash] = useFlash();
  useLiveHosts(
    () => true,
    (event) => {
      const known = hosts.data?.some((h) => h.id === event.id) ?? false;
      if (known) hosts.update((list) => list.map((h) => (h.id === event.id ? withEvent(h, event) : h)));
      return known;
    },
    hosts.reload,
    flash,
  );
  const hostNames = new Map((hosts.data ?? []).map((h) => [h.id, h.hostname]));
  return (
    <section>
      <PageTitle title="Hosts">
        {session.can('hosts.manage') && (
          <button type="button" class="primary" onClick={() => setAdding(true)} disabled={adding}>
            Add a host
          </button>
        )}
      </PageTitle>
      <p class="hint" data-testid="report-interval">
        Hypervisors running the homefleet agent report their guests here{' '}
        {hosts.data?.length ? `every ${interval(hosts.data[0]!.heartbeat_interval_s)}` : 'with each heartbeat'}.
      </p>
      {adding && <AddHost onCreated={tokens.reload} onClose={() => setAdding(false)} />}
      {hosts.error && <Notice kind="error">{hosts.error}</Notice>}
      {!hosts.data && !hosts.error && <Loading />}
      {hosts.data?.length === 0 && (
        <Empty title="No hosts yet">{session.can('hosts.manage') ? 'Use “Add a host” to enroll a hypervisor.' : 'An administrator adds hosts.'}</Empty>
      )}
      {!!hosts.data?.length && (
        <div class="table-wrap card">
          <table class="hosts">
            <thead>
              <tr>
                <th scope="col">Host</th>
                <th scope="col">Status</th>
                <th scope="col">Last heartbeat</th>
                <th scope="col">Agent</th>
                <th scope="col">Upgrade</th>
                <th scope="col">Guests</th>
                <th scope="col">Drift</th>
              </tr>
            </thead>
            <tbody>
              {hosts.data.map((host) => (
                <tr key={host.id} data-host={host.hostname} class={flashed.has(host.id) ? 'flash' : undefined}>
                  <td>
                    <a href={`/hosts/${host.id}`}>{host.hostname}</a>
                  </td>
                  <td>
                    <StatusDot status={host.status} />
                  </td>
                  <td>
                    <Time iso={host.last_heartbeat_at} exact={false} />
                  </td>
                  <td class="mono">{host.agent_version}</td>
                  <td>
                    <Upgrade upgrade={host.upgrade} />
                  </td>
                  <td data-testid="guest-count">{host.guest_count}</td>
                  <td data-testid="drift-count">{host.drift_count ? <strong>{host.drift_count}</strong> : 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {session.can('hosts.read') && <EnrollmentTokens tokens={tokens} manage={session.can('hosts.manage')} hostNames={hostNames} />}
    </section>
  );
}
