import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, Notice, useLoad } from '../../components/ui';
import type { Guest } from '../../../server/contract/hosts';
import type { GuestActionRequest } from '../../../server/contract/inputs/operations';
import { guestLabel } from './GuestDialogs';
import { deploySource } from './deployForm';

/**
 * Rebuild asks what it will do (stop, destroy with the disks, deploy again under the same VMID,
 * keeping the registry instance and its history) and, like destroy, for the guest's name. A guest
 * homefleet did not deploy has no spec: the template to rebuild it from is chosen here. The server's
 * refusals (production, the maintenance window, a deleted key) are shown as they come.
 */
export function RebuildDialog(props: {
  guest: Guest;
  templates: Guest[];
  /** An administrator may force a rebuild of a production instance or outside the maintenance window. */
  offerForce: boolean;
  run: (body: GuestActionRequest) => Promise<void>;
  onClose: () => void;
}) {
  const { guest: g } = props;
  const label = guestLabel(g);
  const wanted = g.name || String(g.vmid);
  // No instance (404) means no deploy spec either.
  const spec = useLoad(() => api('GET /api/instances/:vmid', { params: { vmid: g.vmid } }).then((i) => i.deploy, () => null), [g.vmid]);
  const [source, setSource] = useState('');
  const [typed, setTyped] = useState('');
  const [force, setForce] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const needsSource = spec.data === null;

  async function submit(e: Event) {
    e.preventDefault();
    if (typed !== wanted || busy) return;
    if (needsSource && !source) return setFields({ source_vmid: 'choose the template to rebuild it from' });
    setBusy(true);
    setError(undefined);
    setFields({});
    try {
      await props.run({ action: 'rebuild', ...(needsSource ? { source_vmid: Number(source) } : {}), ...(props.offerForce && force ? { force: true } : {}) });
    } catch (err) {
      setError(messageOf(err));
      if (err instanceof ApiError) setFields(err.fields);
      setBusy(false);
    }
  }

  return (
    <Dialog id="action-dialog" title={`Rebuild ${label}`} onClose={props.onClose}>
      <form onSubmit={submit} noValidate aria-label={`rebuild ${label}`}>
        <p>
          Rebuild {label}? It is stopped and destroyed with its disks, then deployed again under the same VMID {g.vmid}. Its registry instance and history are kept.
        </p>
        {spec.data && (
          <p data-testid="rebuild-source">
            From its deploy spec: {deploySource(spec.data)}, as {spec.data.name}.
          </p>
        )}
        {needsSource && (
          <Field id="rebuild-source" label="Template to rebuild it from" error={fields.source_vmid} hint="homefleet did not deploy this guest, so it has no deploy spec.">
            <select id="rebuild-source" value={source} onChange={(e) => setSource(e.currentTarget.value)}>
              <option value="">choose…</option>
              {props.templates.map((t) => (
                <option key={t.vmid} value={String(t.vmid)}>
                  {t.vmid} “{t.name}” ({t.type})
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field id="rebuild-name" label="Type the guest's name" hint={`Type ${wanted} to confirm.`}>
          <input id="rebuild-name" autocomplete="off" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        </Field>
        {props.offerForce && (
          <label class="check">
            <input type="checkbox" checked={force} onChange={(e) => setForce(e.currentTarget.checked)} /> force (a production instance, or outside the maintenance window)
          </label>
        )}
        {error && <Notice kind="error">{error}</Notice>}
        <div class="form-actions">
          <button type="submit" class="danger" disabled={busy || typed !== wanted || spec.loading}>
            Rebuild {label}
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
