import { useState } from 'preact/hooks';
import { ApiError, messageOf } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, Notice } from '../../components/ui';
import type { Guest } from '../../../server/contract/hosts';
import type { GuestActionRequest } from '../../../server/contract/inputs/operations';
import type { GuestAction } from '../../../server/contract/operations';
import { GuestConfigs } from './GuestConfigs';
import { isProxmoxVmid, PROXMOX_VMID, VMID_RANGE_TEXT } from '../../vmid';
import { actionLabel, SNAPSHOT_NAME } from './guestActions';

export const guestLabel = (g: Guest) => (g.name ? `${g.vmid} “${g.name}”` : `guest ${g.vmid}`);

const QUESTIONS: Partial<Record<GuestAction, string>> = {
  shutdown: 'Its operating system is asked to power off cleanly.',
  stop: 'It is powered off at once, without a clean shutdown.',
  reboot: 'It restarts; what runs on it is interrupted.',
};

/** A guest's config history and diffs, in a dialog as wide as the window allows. */
export function ConfigDialog({ hostId, guest, onClose }: { hostId: number; guest: Guest; onClose: () => void }) {
  return (
    <Dialog id="config-dialog" title={`Config of ${guestLabel(guest)}`} onClose={onClose} wide>
      <GuestConfigs hostId={hostId} vmid={guest.vmid} />
    </Dialog>
  );
}

/**
 * What an action asks before it runs: its fields (snapshot name, clone's new VMID and name), and a
 * confirmation that names the guest, says when it is a production guest, and for destroy asks for its
 * name. The server's refusal is shown here, beside the fields it names.
 */
export function ActionDialog(props: {
  guest: Guest;
  action: GuestAction;
  production: boolean;
  /** Outside the maintenance window, an administrator may force the action. */
  offerForce: boolean;
  run: (body: GuestActionRequest) => Promise<void>;
  onClose: () => void;
}) {
  const { guest: g, action } = props;
  const label = guestLabel(g);
  const [name, setName] = useState('');
  const [newVmid, setNewVmid] = useState('');
  const [full, setFull] = useState(true);
  const [typed, setTyped] = useState('');
  const [force, setForce] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const wanted = g.name || String(g.vmid);

  function check(): Record<string, string> {
    const wrong: Record<string, string> = {};
    if (action === 'clone') {
      if (!/^\d+$/.test(newVmid.trim()) || !isProxmoxVmid(Number(newVmid))) wrong.new_vmid = `must be a whole number from ${VMID_RANGE_TEXT}`;
      if (!name.trim()) wrong.name = 'is required';
    }
    if ((action === 'snapshot' || action === 'rollback') && !SNAPSHOT_NAME.test(name)) {
      wrong[action === 'snapshot' ? 'name' : 'snapshot'] = 'must start with a letter and hold only letters, digits, - and _ (at most 40)';
    }
    return wrong;
  }

  async function submit(e: Event) {
    e.preventDefault();
    const wrong = check();
    setFields(wrong);
    setError(undefined);
    if (Object.keys(wrong).length) return;
    if (action === 'destroy' && typed !== wanted) return;
    const extra = props.offerForce && force ? { force: true } : {};
    const body: GuestActionRequest =
      action === 'snapshot'
        ? { action, name, ...extra }
        : action === 'rollback'
          ? { action, snapshot: name, ...extra }
          : action === 'clone'
            ? { action, new_vmid: Number(newVmid), name: name.trim(), full, ...extra }
            : ({ action, ...extra } as GuestActionRequest);
    setBusy(true);
    try {
      await props.run(body);
    } catch (err) {
      setError(messageOf(err));
      if (err instanceof ApiError) setFields(err.fields);
      setBusy(false);
    }
  }

  const nameField = action === 'snapshot' ? 'name' : 'snapshot';
  return (
    <Dialog id="action-dialog" title={`${actionLabel(action)} ${label}`} onClose={props.onClose}>
      <form onSubmit={submit} noValidate aria-label={`${action} ${label}`}>
        {props.production && (action === 'shutdown' || action === 'stop' || action === 'reboot' || action === 'rollback') && (
          <Notice kind="warning">
            <strong data-testid="production-warning">{g.name || `Guest ${g.vmid}`} is a production guest.</strong>
          </Notice>
        )}
        {action in QUESTIONS && (
          <p>
            {actionLabel(action)} {label}? {QUESTIONS[action]}
          </p>
        )}
        {(action === 'snapshot' || action === 'rollback') && (
          <Field id="snapshot-name" label={action === 'snapshot' ? 'Snapshot name' : 'Snapshot to roll back to'} error={fields[nameField]} hint="Starts with a letter; letters, digits, - and _; at most 40.">
            <input id="snapshot-name" autocomplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} aria-invalid={fields[nameField] ? 'true' : undefined} />
          </Field>
        )}
        {action === 'rollback' && <p>Roll {label} back? Changes since the snapshot are lost.</p>}
        {action === 'clone' && (
          <>
            <Field id="clone-vmid" label="New VMID" error={fields.new_vmid} hint={`${VMID_RANGE_TEXT} (Proxmox’s range), not used by another guest.`}>
              <input
                id="clone-vmid"
                type="number"
                min={PROXMOX_VMID.min}
                max={PROXMOX_VMID.max}
                step={1}
                inputMode="numeric"
                autocomplete="off"
                value={newVmid}
                onInput={(e) => setNewVmid(e.currentTarget.value)}
                aria-invalid={fields.new_vmid ? 'true' : undefined}
                aria-describedby={fields.new_vmid ? 'clone-vmid-error' : 'clone-vmid-hint'}
              />
            </Field>
            <Field id="clone-name" label="New name" error={fields.name}>
              <input id="clone-name" autocomplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} aria-invalid={fields.name ? 'true' : undefined} />
            </Field>
            <label class="check">
              <input type="checkbox" checked={full} onChange={(e) => setFull(e.currentTarget.checked)} /> full copy (a linked clone shares the source’s disks)
            </label>
          </>
        )}
        {action === 'destroy' && (
          <>
            <p>
              Destroy {label} and its disks for good? Type <strong>{wanted}</strong> to confirm.
            </p>
            <Field id="destroy-name" label="Type the guest's name">
              <input id="destroy-name" autocomplete="off" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
            </Field>
          </>
        )}
        {props.offerForce && (
          <label class="check">
            <input type="checkbox" checked={force} onChange={(e) => setForce(e.currentTarget.checked)} /> force outside the maintenance window
          </label>
        )}
        {error && <Notice kind="error">{error}</Notice>}
        <div class="form-actions">
          <button type="submit" class={action === 'snapshot' || action === 'clone' ? 'primary' : 'danger'} disabled={busy || (action === 'destroy' && typed !== wanted)}>
            {actionLabel(action)} {label}
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
