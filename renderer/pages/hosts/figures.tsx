import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api';
import { useLive } from '../../live';
import type { GuestLatest, HostMetricsLatest } from '../../../server/contract/metrics';

/**
 * The host's last reported numbers (GET …/metrics/latest), then each `host.metrics` event as it comes;
 * an event without its guests' numbers (a host with more than a hundred guests) is read again whole.
 */
export function useLatestMetrics(hostId: number): HostMetricsLatest | undefined {
  const [latest, setLatest] = useState<HostMetricsLatest>();
  const [reread, setReread] = useState(0);
  useEffect(() => {
    let live = true;
    api('GET /api/hosts/:id/metrics/latest', { params: { id: hostId } }).then(
      (value) => live && value && setLatest(value),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [hostId, reread]);
  // Another host's numbers are not this one's, even until this one's arrive.
  useEffect(() => setLatest(undefined), [hostId]);
  useLive(['host.metrics'], ({ data }) => {
    if (data.host_id !== hostId) return;
    if (data.guests_omitted) setReread((n) => n + 1);
    else setLatest(data);
  });
  return latest;
}

const GIB = 2 ** 30;
const size = (v: number) => (v >= GIB ? `${(v / GIB).toFixed(1)} GiB` : `${Math.round(v / 2 ** 20)} MiB`);

function Bar({ ratio, label, testid }: { ratio: number; label: string; testid: string }) {
  const pct = Math.max(0, Math.min(1, ratio));
  return (
    <span class="figure" data-testid={testid} title={label}>
      <span class="bar" role="meter" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(pct * 100)} aria-label={label}>
        <span style={{ width: `${pct * 100}%` }} />
      </span>
      {label}
    </span>
  );
}

/** A guest's CPU and memory as two small bars, from its host's last heartbeat (two table cells). */
export function GuestFigure({ guest }: { guest: GuestLatest | undefined }) {
  return (
    <>
      <td data-label="CPU">{guest?.cpu != null ? <Bar ratio={guest.cpu} label={`${(guest.cpu * 100).toFixed(1)}%`} testid="guest-cpu" /> : <span class="muted">—</span>}</td>
      <td data-label="Memory">
        {guest?.mem != null && guest.maxmem ? (
          <Bar ratio={guest.mem / guest.maxmem} label={`${size(guest.mem)} of ${size(guest.maxmem)}`} testid="guest-mem" />
        ) : (
          <span class="muted">—</span>
        )}
      </td>
    </>
  );
}
