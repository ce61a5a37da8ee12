import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { MenuButton, type MenuItem } from '../../components/Menu';
import { Notice } from '../../components/ui';
import { useCoalesced, useLive } from '../../live';
import type { Guest, HostDetail } from '../../../server/contract/hosts';
import type { GuestActionRequest } from '../../../server/contract/inputs/operations';
import { DISRUPTIVE_ACTIONS, type GuestAction, type MaintenancePolicy, type Operation } from '../../../server/contract/operations';
import type { HostMetricsLatest } from '../../../server/contract/metrics';
import type { PlacedInstance } from '../../../server/contract/registry';
import { GuestFigure } from './figures';
import { ActionDialog, ConfigDialog, guestLabel } from './GuestDialogs';
import { actionLabel, guestActions } from './guestActions';
import { RebuildDialog } from './RebuildDialog';

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
 * The host's guests, and apart from them its templates, with their registry instance and latest
 * operation. Operators act through one menu per row that offers only what fits the guest's state;
 * each action's fields and confirmation open in a dialog.
 */
export function GuestsCard({ host: h, operations, policy, can, metrics }: Props) {
  const [instances, setInstances] = useState<Map<number, PlacedInstance>>();
  const [open, setOpen] = useState<{ vmid: number; action: GuestAction | 'config' }>();
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();
  const key = `${h.id}:${h.guests.map((g) => g.vmid).join(',')}`;
  const readInstances = () =>
    api('GET /api/instances', { query: { host_id: h.id } }).then(
      (list) => setInstances(new Map(list.map((i) => [i.vmid, i]))),
      () => setInstances(new Map()),
    );
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => void readInstances(), [key]);
  // A heartbeat that moves many guests sends an event for each: one re-read for them all.
  const reread = useCoalesced(() => void readInstances());
  useLive(['instance.created', 'instance.updated', 'instance.deleted'], reread);

  const latest = new Map<number, Operation>();
  // A deploy is its new guest's operation, a rebuild (type deploy, action rebuild) its guest's.
  for (const op of operations) if ((op.type === 'guest.action' || op.type === 'deploy') && op.vmid !== null && !latest.has(op.vmid)) latest.set(op.vmid, op);
  const windowClosed = !!policy && policy.windows.length > 0 && !policy.window_open;
  const production = (g: Guest) => instances?.get(g.vmid)?.stack === 'production';
  const guests = h.guests.filter((g) => !g.template);
  const templates = h.guests.filter((g) => g.template);
  const openGuest = open && h.guests.find((g) => g.vmid === open.vmid);

  async function run(g: Guest, body: GuestActionRequest) {
    setMessage(undefined);
    await api('POST /api/hosts/:id/guests/:vmid/actions', { params: { id: h.id, vmid: g.vmid }, body });
    setOpen(undefined);
    setMessage({ kind: 'success', text: `${actionLabel(body.action)} of ${guestLabel(g)} requested.` });
  }

  /** Start asks nothing; every other action opens its dialog. Start's refusal is said above the table. */
  const choose = (g: Guest, action: GuestAction | 'config') =>
    action === 'start' ? void run(g, { action }).catch((e) => setMessage({ kind: 'error', text: messageOf(e) })) : setOpen({ vmid: g.vmid, action });

  const menuOf = (g: Guest) => {
    if (!can.operate && !can.diagnostics) return null;
    const offer = guestActions(g, { production: production(g), hostOnline: h.status === 'online', busy: OPEN.has(latest.get(g.vmid)?.status ?? '') });
    const items: MenuItem[] = can.operate
      ? offer.actions.map((action) => ({
          label: action === 'start' ? 'Start' : `${actionLabel(action)}…`,
          disabled: !!offer.blocked,
          danger: action === 'destroy' || action === 'rebuild',
          onSelect: () => choose(g, action),
        }))
      : [];
    if (can.diagnostics) items.push({ label: 'Config history…', onSelect: () => choose(g, 'config') });
    return <MenuButton id={`guest-menu-${g.vmid}`} label="Actions" name={`Actions for ${guestLabel(g)}`} items={items} note={can.operate ? offer.blocked : undefined} />;
  };

  const table = (list: Guest[], kind: 'guest' | 'template') => (
    <div class="table-wrap">
      <table class="guests stack">
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
          {list.map((g) => {
            const instance = instances?.get(g.vmid);
            const op = latest.get(g.vmid);
            return (
              <tr key={g.vmid} {...{ [`data-${kind}`]: g.vmid }}>
                <td data-label="VMID">{instance ? <a href={`/instances/${g.vmid}`}>{g.vmid}</a> : g.vmid}</td>
                <td data-label="Name">{g.name}</td>
                <td data-label="Type">{g.type}</td>
                <td data-label="Status" data-testid={`guest-status-${g.vmid}`}>
                  {g.status}
                  {g.lock && (
                    <span class="badge badge-locked" data-testid={`guest-lock-${g.vmid}`} title={`Proxmox holds a ${g.lock} lock: actions wait until it clears.`}>
                      locked: {g.lock}
                    </span>
                  )}
                </td>
                <GuestFigure guest={metrics?.guests.find((m) => m.vmid === g.vmid)} />
                <td data-label="Instance">
                  {instance ? (
                    <>
                      {instance.name} <span class={`badge badge-${instance.state}`}>{instance.state}</span>
                      {instance.stack === 'production' && <span class="badge badge-production">production</span>}
                    </>
                  ) : (
                    <span class="muted">none</span>
                  )}
                </td>
                <td data-label="Last operation" data-testid={`guest-op-${g.vmid}`}>
                  {op ? (
                    <>
                      {op.action ?? op.type}: <span class={`badge badge-op-${op.status}`} data-status={op.status}>{op.status}</span>
                    </>
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
                {(can.operate || can.diagnostics) && (
                  <td class="actions-cell" data-label="Actions">
                    {menuOf(g)}
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );

  return (
    <>
      <div class="card" data-testid="guests">
        <h2>Guests ({guests.length})</h2>
        {message && <Notice kind={message.kind}>{message.text}</Notice>}
        {can.operate && windowClosed && <p class="muted">Outside the maintenance window: shutdown, stop, reboot, rollback, rebuild and destroy wait for one{can.force ? ' unless you force them' : ''}.</p>}
        {guests.length === 0 ? <p class="muted">No guests reported.</p> : table(guests, 'guest')}
      </div>
      {templates.length > 0 && (
        <div class="card" data-testid="templates">
          <h2>Templates ({templates.length})</h2>
          <p class="hint">Templates do not run; a new guest is cloned from one.</p>
          {table(templates, 'template')}
        </div>
      )}
      {openGuest && open.action === 'config' && <ConfigDialog hostId={h.id} guest={openGuest} onClose={() => setOpen(undefined)} />}
      {openGuest && open.action === 'rebuild' && (
        <RebuildDialog
          key={`${open.vmid}-rebuild`}
          guest={openGuest}
          templates={templates}
          offerForce={can.force && (windowClosed || production(openGuest))}
          run={(body) => run(openGuest, body)}
          onClose={() => setOpen(undefined)}
        />
      )}
      {openGuest && open.action !== 'config' && open.action !== 'rebuild' && (
        <ActionDialog
          key={`${open.vmid}-${open.action}`}
          guest={openGuest}
          action={open.action}
          production={production(openGuest)}
          offerForce={can.force && windowClosed && DISRUPTIVE_ACTIONS.includes(open.action)}
          run={(body) => run(openGuest, body)}
          onClose={() => setOpen(undefined)}
        />
      )}
    </>
  );
}
