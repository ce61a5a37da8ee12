import { useLoad, Empty, Loading, Notice, PageTitle, Time } from '../components/ui';
import { api } from '../api';
import { useLive } from '../live';
import type { Alert } from '../../server/contract/alerts';

/** Firing first (newest first), then resolved; an alert event replaces or adds its row at once. */
function ordered(alerts: Alert[]): Alert[] {
  return [...alerts].sort((a, b) => (a.status === b.status ? b.id - a.id : a.status === 'firing' ? -1 : 1));
}

export function AlertsPage() {
  const list = useLoad(() => api('GET /api/alerts', { query: { limit: 200 } }), []);
  useLive(['alert.firing', 'alert.resolved'], ({ data }) => list.update((alerts) => ordered([data, ...alerts.filter((a) => a.id !== data.id)])));
  useLive(['reset'], () => list.reload());

  if (list.error) return <Notice kind="error">{list.error}</Notice>;
  if (!list.data) return <Loading />;
  const firing = list.data.filter((a) => a.status === 'firing').length;
  return (
    <section>
      <PageTitle title="Alerts">
        <span class="muted" data-testid="firing-count">
          {firing === 0 ? 'nothing firing' : `${firing} firing`}
        </span>
      </PageTitle>
      {list.data.length === 0 ? (
        <Empty title="No alerts yet.">Alerts appear here when a rule's condition holds long enough: a host that stops reporting, a full disk, a failed job.</Empty>
      ) : (
        <div class="table-wrap">
          <table data-testid="alerts">
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col">Severity</th>
                <th scope="col">Rule</th>
                <th scope="col">About</th>
                <th scope="col">What</th>
                <th scope="col">Since</th>
                <th scope="col">Resolved</th>
              </tr>
            </thead>
            <tbody>
              {ordered(list.data).map((a) => (
                <tr key={a.id} data-alert={a.id} data-status={a.status}>
                  <td>
                    <span class={`badge ${a.status === 'firing' ? 'severity-critical' : 'badge-done'}`}>{a.status}</span>
                  </td>
                  <td>
                    <span class={`badge severity-${a.severity}`}>{a.severity}</span>
                  </td>
                  <td class="mono">{a.rule}</td>
                  <td>{a.subject.type === 'host' ? <a href={`/hosts/${encodeURIComponent(a.subject.id)}`}>{a.subject.name}</a> : a.subject.name}</td>
                  <td class="wrap">{a.message}</td>
                  <td>
                    <Time iso={a.started_at} exact={false} />
                  </td>
                  <td>{a.resolved_at ? <Time iso={a.resolved_at} exact={false} /> : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
