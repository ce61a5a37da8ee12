import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Confirm, Notice } from '../../components/ui';
import { useLive } from '../../live';
import type { Guest, HostDetail } from '../../../server/contract/hosts';
import type { GuestAction, GuestActionRequest, MaintenancePolicy, Operation } from '../../../server/contract/operations';
import type { HostMetricsLatest } from '../../../server/contract/metrics';
import type { PlacedInstance } from '../../../server/contract/registry';
import { GuestFigure } from './figures';
import { useCoalesced } from './live';
import { GuestConfigs } from './GuestConfigs';

/** Actions that stop or remove something: confirmed first, naming the guest (destroy by typing its name). */
const STOPS: GuestAction[] = ['shutdown', 'stop', 'reboot', 'rollback', 'destroy'];
const ACTIONS: GuestAction[] = ['start', 'shutdown', 'stop', 'reboot', 'snapshot', 'rollback', 'clone', 'destroy'];
const OPEN = new Set(['pending', 'sent']);

interface Props {
  host: HostDetail;
  operations: Operation[];
  policy: MaintenancePolicy | undefined;
  can: { operate: boolean; force: boolean; diagnostics: boolean };
  /** The host's last reported numbers, for each guest's CPU and memory figure. */
  metrics?: HostMetricsLatest;
}

/**
 * The host's guests with their registry instance and latest operation; operators act on them. An
 * action that stops or removes something is confirmed naming the guest; destroy asks for its name.
 */
export function GuestsCard({ host: h, operations, policy, can, metrics }: Props) {
  const [instances, setInstances] = useState<Map<number, PlacedInstance>>();
  const [open, setOpen] = useState<{ vmid: number; action: GuestAction | 'config' }>();
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();
  const key = `${h.id}:${h.guests.map((g) => g.vmid).join(',')}`;
  const readInstances = () =>
    api<PlacedInstance[]>('GET', `/api/instances?host_id=${h.id}`).then(
      (list) => setInstances(new Map(list.map((i) => [i.vmid, i]))),
      () => setInstances(new Map()),
    );
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => void readInstances(), [key]);
  // A heartbeat that moves many guests sends an event for each: one re-read for them all.
  const reread = useCoalesced(() => void readInstances());
  useLive(['instance.created', 'instance.updated', 'instance.deleted'], reread);

  const latest = new Map<number, Operation>();
  for (const op of operations) if (op.type === 'guest.action' && op.vmid !== null && !latest.has(op.vmid)) latest.set(op.vmid, op);
  const windowClosed = !!policy && policy.windows.length > 0 && !policy.window_open;

  async function run(g: Guest, body: GuestActionRequest) {
    setMessage(undefined);
    try {
      await api('POST', `/api/hosts/${h.id}/guests/${g.vmid}/actions`, body);
      setOpen(undefined);
      setMessage({ kind: 'success', text: `${body.action} of ${g.name || g.vmid} requested.` });
    } catch (e) {
      setMessage({ kind: 'error', text: messageOf(e) });
    }
  }

  return (
    <div class="card" data-testid="guests">
      <h2>Guests ({h.guests.length})</h2>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {can.operate && windowClosed && <p class="muted">Outside the maintenance window: shutdown, stop, reboot, rollback and destroy wait for one{can.force ? ' unless you force them' : ''}.</p>}
      {h.guests.length === 0 ? (
        <p class="muted">No guests reported.</p>
      ) : (
        <div class="table-wrap">
          <table class="guests">
            <thead>
              <tr>
                <th scope="col">VMID</th>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col">CPU</th>
                <th scope="col">Memory</th>
                <th scope="col">Instance</th>
                <th scope="col">Last operation</th>
                {(can.operate || can.diagnostics) && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {h.guests.map((g) => {
                const instance = instances?.get(g.vmid);
                const op = latest.get(g.vmid);
                const busy = !!op && OPEN.has(op.status);
                const columns = can.operate || can.diagnostics ? 9 : 8;
                return (
                  <Fragment key={g.vmid}>
                    <tr data-guest={g.vmid}>
                      <td>{instance ? <a href={`/instances/${g.vmid}`}>{g.vmid}</a> : g.vmid}</td>
                      <td>{g.name}</td>
                      <td>{g.type}</td>
                      <td data-testid={`guest-status-${g.vmid}`}>{g.status}</td>
                      <GuestFigure guest={metrics?.guests.find((m) => m.vmid === g.vmid)} />
                      <td>
                        {instance ? (
                          <>
                            {instance.name} <span class={`badge badge-${instance.state}`}>{instance.state}</span>
                            {instance.stack === 'production' && <span class="badge badge-production">production</span>}
                          </>
                        ) : (
                          <span class="muted">none</span>
                        )}
                      </td>
                      <td data-testid={`guest-op-${g.vmid}`}>
                        {op ? (
                          <>
                            {op.action}: <span class={`badge badge-op-${op.status}`} data-status={op.status}>{op.status}</span>
                          </>
                        ) : (
                          <span class="muted">—</span>
                        )}
                      </td>
                      {(can.operate || can.diagnostics) && (
                        <td class="actions-cell">
                          <div class="row-actions">
                            {can.operate &&
                              ACTIONS.map((action) => (
                                <button type="button" key={action} disabled={busy || h.status !== 'online'} onClick={() => (action === 'start' ? void run(g, { action }) : setOpen({ vmid: g.vmid, action }))}>
                                  {action}
                                  {action !== 'start' && '…'}
                                </button>
                              ))}
                            {can.diagnostics && (
                              <button type="button" onClick={() => setOpen(open?.vmid === g.vmid && open.action === 'config' ? undefined : { vmid: g.vmid, action: 'config' })}>
                                config
                              </button>
                            )}
                          </div>
                        </td>
                      )}
                    </tr>
                    {/* What an action asks, and a guest's configs, open in a row of their own under the guest, across the table. */}
                    {open?.vmid === g.vmid && (
                      <tr data-guest-form={g.vmid} class="guest-form">
                        <td colSpan={columns}>
                          {open.action === 'config' ? (
                            <GuestConfigs hostId={h.id} vmid={g.vmid} />
                          ) : (
                            <ActionForm guest={g} action={open.action} force={can.force && windowClosed && STOPS.includes(open.action)} onRun={(body) => run(g, body)} onCancel={() => setOpen(undefined)} />
                          )}
                        </td>
                      </tr>
                    )}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** The fields an action takes, and its confirmation. */
function ActionForm(props: { guest: Guest; action: GuestAction; force: boolean; onRun: (body: GuestActionRequest) => void; onCancel: () => void }) {
  const { guest: g, action } = props;
  const [name, setName] = useState('');
  const [newVmid, setNewVmid] = useState('');
  const [full, setFull] = useState(true);
  const [typed, setTyped] = useState('');
  const [force, setForce] = useState(false);
  const label = g.name ? `${g.vmid} “${g.name}”` : `guest ${g.vmid}`;
  const extra = props.force && force ? { force: true } : {};
  const forceBox = props.force && (
    <label class="check">
      <input type="checkbox" checked={force} onChange={(e) => setForce(e.currentTarget.checked)} /> force outside the maintenance window
    </label>
  );

  if (action === 'snapshot' || action === 'rollback' || action === 'clone') {
    const submit = (e: Event) => {
      e.preventDefault();
      if (action === 'snapshot') props.onRun({ action, name, ...extra });
      else if (action === 'rollback') props.onRun({ action, snapshot: name, ...extra });
      else props.onRun({ action, new_vmid: Number(newVmid), name, full, ...extra });
    };
    return (
      <form class="confirm" onSubmit={submit} aria-label={`${action} ${label}`}>
        {action === 'clone' && (
          <input aria-label="new VMID" placeholder="new VMID" inputMode="numeric" value={newVmid} onInput={(e) => setNewVmid(e.currentTarget.value)} size={8} />
        )}
        <input aria-label={action === 'clone' ? 'new name' : 'snapshot name'} placeholder={action === 'clone' ? 'new name' : 'snapshot name'} value={name} onInput={(e) => setName(e.currentTarget.value)} size={14} />
        {action === 'clone' && (
          <label class="check">
            <input type="checkbox" checked={full} onChange={(e) => setFull(e.currentTarget.checked)} /> full copy
          </label>
        )}
        {action === 'rollback' && <span>Roll {label} back? Changes since the snapshot are lost.</span>}
        {forceBox}
        <button type="submit" class={action === 'rollback' ? 'danger' : 'primary'}>
          {action === 'clone' ? `Clone ${label}` : action === 'snapshot' ? `Snapshot ${label}` : `Roll back ${label}`}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </form>
    );
  }
  if (action === 'destroy') {
    const wanted = g.name || String(g.vmid);
    return (
      <form class="confirm" aria-label={`destroy ${label}`} onSubmit={(e) => (e.preventDefault(), typed === wanted && props.onRun({ action, ...extra }))}>
        <span>
          Destroy {label} and its disks for good? Type <strong>{wanted}</strong> to confirm.
        </span>
        <input aria-label="type the guest's name" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} size={14} />
        {forceBox}
        <button type="submit" class="danger" disabled={typed !== wanted}>
          Destroy {label}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </form>
    );
  }
  return (
    <div>
      <Confirm
        label={`Confirm ${action} of ${label}`}
        question={<>{`${action[0]!.toUpperCase()}${action.slice(1)} ${label}?`}{forceBox}</>}
        action={`${action[0]!.toUpperCase()}${action.slice(1)} ${label}`}
        onConfirm={() => props.onRun({ action, ...extra } as GuestActionRequest)}
        onCancel={props.onCancel}
      />
    </div>
  );
}

