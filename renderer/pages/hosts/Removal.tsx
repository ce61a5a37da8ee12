import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Confirm, Time } from '../../components/ui';
import { navigate } from '../../router';
import type { HostDetail } from '../../../server/contract/hosts';
import { isLive, type Act } from './parts';

/** Removal: started and confirmed by the host's receipt, forced while it waits, or done (then only told). */
export function Removal({ host: h, manage, act }: { host: HostDetail; manage: boolean; act: Act }) {
  const [confirming, setConfirming] = useState(false);
  const d = h.deletion;
  // A removed host is only history: nothing is offered for it, not even a second removal.
  const removable = manage && isLive(h);
  return (
    <div class="danger-zone">
      <h3>Removal</h3>
      {d && (
        <p data-testid="deletion-state">
          {d.status === 'pending' && 'Waiting for the host’s next heartbeat to send the uninstall command.'}
          {d.status === 'delivered' && 'Uninstall sent; waiting for the host’s receipt.'}
          {d.status === 'expired' && 'Uninstall sent, but no receipt came within 7 days; an administrator can force the removal.'}
          {d.status === 'confirmed' && (
            <>
              Removed; the host confirmed it <Time iso={d.confirmed_at} />.
            </>
          )}
          {d.status === 'forced' && (
            <>
              Removed by force <Time iso={d.confirmed_at} />, without a receipt.
            </>
          )}
        </p>
      )}
      {manage && h.status === 'deleting' && (
        <button type="button" class="danger" onClick={() => act(() => api('DELETE /api/hosts/:id', { params: { id: h.id }, query: { force: 'true' } }))}>
          Force removal
        </button>
      )}
      {removable && !confirming && (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Remove host…
        </button>
      )}
      {removable && confirming && (
        <Confirm
          label={`Confirm removing ${h.hostname}`}
          question={`Remove ${h.hostname}? Its agent uninstalls itself at its next heartbeat.`}
          action="Remove"
          onConfirm={() => {
            setConfirming(false);
            void act(() => api('DELETE /api/hosts/:id', { params: { id: h.id } }));
          }}
          onCancel={() => setConfirming(false)}
        />
      )}
      {!manage && !d && h.status !== 'deleted' && <p class="muted">Administrators remove hosts.</p>}
      {h.status === 'deleted' && (
        <p>
          <button type="button" class="link" onClick={() => navigate('/hosts')}>
            Back to hosts
          </button>
        </p>
      )}
    </div>
  );
}
