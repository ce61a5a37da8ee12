import { api } from '../../api';
import { Time } from '../../components/ui';
import { navigate } from '../../router';
import type { HostDetail } from '../../../server/hosts/schema';

export function Removal(props: {
  host: HostDetail;
  manage: boolean;
  confirming: boolean;
  setConfirming: (v: boolean) => void;
  act: (action: () => Promise<unknown>, done?: string) => Promise<void>;
}) {
  const { host: h, manage, confirming, setConfirming, act } = props;
  const d = h.deletion;
  return (
    <div class="danger-zone">
      <h3>Removal</h3>
      {d && (
        <p data-testid="deletion-state">
          {d.status === 'pending' && 'Waiting for the host’s next heartbeat to send the uninstall command.'}
          {d.status === 'delivered' && 'Uninstall sent; waiting for the host’s receipt.'}
          {d.status === 'confirmed' && (
            <>
              Removed; the host confirmed at <Time iso={d.confirmed_at} />.
            </>
          )}
          {d.status === 'forced' && (
            <>
              Removed by force at <Time iso={d.confirmed_at} />, without a receipt.
            </>
          )}
        </p>
      )}
      {manage && h.status === 'deleting' && (
        <button type="button" class="danger" onClick={() => act(() => api('DELETE', `/api/hosts/${h.id}?force=true`))}>
          Force removal
        </button>
      )}
      {manage && h.status !== 'deleting' && !confirming && (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Remove host…
        </button>
      )}
      {manage && h.status !== 'deleting' && confirming && (
        <div class="confirm">
          <span>The agent uninstalls itself at its next heartbeat.</span>
          <button
            type="button"
            class="danger"
            onClick={() => {
              setConfirming(false);
              void act(() => api('DELETE', `/api/hosts/${h.id}`));
            }}
          >
            Remove
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
      {!manage && !d && <p class="muted">Administrators remove hosts.</p>}
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
