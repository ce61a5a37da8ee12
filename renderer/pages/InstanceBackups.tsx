import { api } from '../api';
import { Notice, Time, useLoad } from '../components/ui';
import { fileSize } from './Settings';

/** The instance page's backups: what agents last reported of its guest, newest first. */
export function InstanceBackups({ vmid }: { vmid: string }) {
  const backups = useLoad(() => api('GET /api/instances/:vmid/backups', { params: { vmid } }), [vmid]);
  return (
    <div class="card span-all" data-testid="instance-backups">
      <h2>Backups</h2>
      {backups.error && <Notice kind="error">{backups.error}</Notice>}
      {backups.data?.length === 0 && <p class="muted">No agent has reported a backup of this guest.</p>}
      {backups.data && backups.data.length > 0 && (
        <div class="table-wrap">
          <table class="runs stack">
            <thead>
              <tr>
                <th>Made</th>
                <th>Volume</th>
                <th>Size</th>
                <th>Verification</th>
                <th>Reported by</th>
              </tr>
            </thead>
            <tbody>
              {backups.data.map((b) => (
                <tr key={b.volid} data-volid={b.volid}>
                  <td>
                    <Time iso={new Date(b.ctime * 1000).toISOString()} exact={false} />
                  </td>
                  <td class="mono wrap">
                    {b.volid}
                    {b.protected && <span class="badge"> protected</span>}
                  </td>
                  <td>{fileSize(b.size)}</td>
                  <td>{b.verified === null ? <span class="muted">not verified</span> : <span class={`badge health-${b.verified === 'ok' ? 'pass' : 'fail'}`}>{b.verified}</span>}</td>
                  <td>{b.host.name}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
