import { useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Notice } from '../../components/ui';
import type { MaintenancePolicyInput, MaintenanceWindow, Weekday } from '../../../server/contract/inputs/operations';
import type { MaintenancePolicy } from '../../../server/contract/operations';

/** "sat,sun 22:00-04:00", one window a line. */
const windowLine = (w: MaintenanceWindow) => `${w.days.join(',')} ${w.start}-${w.end}`;
function parseWindows(text: string): MaintenanceWindow[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [days = '', times = ''] = line.split(/\s+/);
      const [start = '', end = ''] = times.split('-');
      return { days: days.split(',').map((d) => d.trim().toLowerCase()) as Weekday[], start, end };
    });
}

/** The host's maintenance policy: read by all, changed by administrators. */
export function MaintenanceCard(props: { hostId: number; policy: MaintenancePolicy | undefined; manage: boolean; onSaved: (p: MaintenancePolicy) => void }) {
  const { policy } = props;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<{ windows: string } & Omit<MaintenancePolicyInput, 'windows'>>();
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();
  if (!policy) return null;
  const start = () => {
    setDraft({ windows: policy.windows.map(windowLine).join('\n'), timezone: policy.timezone, auto_upgrade: policy.auto_upgrade, muted: policy.muted });
    setEditing(true);
  };
  const save = async (e: Event) => {
    e.preventDefault();
    if (!draft) return;
    try {
      const saved = await api('PUT /api/hosts/:id/maintenance', { params: { id: props.hostId }, body: { ...draft, windows: parseWindows(draft.windows) } });
      props.onSaved(saved);
      setEditing(false);
      setMessage({ kind: 'success', text: 'Maintenance policy saved.' });
    } catch (err) {
      setMessage({ kind: 'error', text: messageOf(err) });
    }
  };
  return (
    <div class="card" data-testid="maintenance">
      <h2>Maintenance</h2>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {!editing || !draft ? (
        <>
          <dl class="policy">
            <dt>Windows</dt>
            <dd>
              {policy.windows.length ? policy.windows.map(windowLine).join('; ') : 'none (disruptive actions run at any time)'} <span class="muted">{policy.timezone}</span>
            </dd>
            <dt>Now</dt>
            <dd>{policy.windows.length === 0 ? '—' : policy.window_open ? 'inside a window' : 'outside every window'}</dd>
            <dt>Auto-upgrade</dt>
            <dd>{policy.auto_upgrade ? 'inside a window' : 'off'}</dd>
            <dt>Alerts</dt>
            <dd>{policy.muted ? 'muted (recorded, not notified)' : 'notified'}</dd>
          </dl>
          {props.manage && (
            <button type="button" onClick={start}>
              Edit maintenance…
            </button>
          )}
        </>
      ) : (
        <form onSubmit={save} class="stack">
          <label>
            Windows, one a line (days start-end), e.g. <code>sat,sun 22:00-04:00</code>
            <textarea rows={3} value={draft.windows} onInput={(e) => setDraft({ ...draft, windows: e.currentTarget.value })} />
          </label>
          <label>
            Time zone <input value={draft.timezone} onInput={(e) => setDraft({ ...draft, timezone: e.currentTarget.value })} />
          </label>
          <label class="check">
            <input type="checkbox" checked={draft.auto_upgrade} onChange={(e) => setDraft({ ...draft, auto_upgrade: e.currentTarget.checked })} /> upgrade the agent by itself inside a window
          </label>
          <label class="check">
            <input type="checkbox" checked={draft.muted} onChange={(e) => setDraft({ ...draft, muted: e.currentTarget.checked })} /> mute this host’s alerts
          </label>
          <div class="actions">
            <button type="submit" class="primary">
              Save
            </button>
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
