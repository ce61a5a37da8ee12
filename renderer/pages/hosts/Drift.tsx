import { useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Confirm, Notice } from '../../components/ui';
import { plural, sentence } from '../../format';
import type { DriftItem, DriftResult, HostDetail } from '../../../server/contract/hosts';
import type { DriftApply } from '../../../server/contract/inputs/hosts';

type Outcome =
  | { kind: 'error' | 'success'; text: string }
  /** "Apply all": what it applied, and what it left for a person (production renames, conflicts) with the server's reason. */
  | { kind: 'all'; applied: number; skipped: { vmid: number; error: string; item: DriftItem | undefined }[] };

type ProductionRename = Extract<DriftItem, { kind: 'name_differs' }>;
const isProductionRename = (d: DriftItem): d is ProductionRename => d.kind === 'name_differs' && d.instance_stack === 'production';
/** What "apply all" (and sync_registry) takes: creations, and renames of instances that are not production. */
const inBulk = (d: DriftItem) => d.kind === 'guest_without_instance' || (d.kind === 'name_differs' && d.instance_stack !== 'production');

function DriftText({ item }: { item: DriftItem }) {
  switch (item.kind) {
    case 'guest_without_instance':
      return <>Guest “{item.guest_name}” has no instance in the registry</>;
    case 'name_differs':
      return (
        <>
          Registry says “{item.instance_name}”, the host says “{item.guest_name}”{item.instance_stack === 'production' && <span class="badge badge-production">production</span>}
        </>
      );
    case 'conflict':
      return (
        <>
          <strong>Conflict:</strong> guest “{item.guest_name}” is also reported by{' '}
          {item.other_hosts.map((other, i) => (
            <>
              {i > 0 && ', '}
              <a href={`/hosts/${other.id}`} data-testid="conflict-host">
                {other.hostname}
              </a>
            </>
          ))}
          {item.instance_name === null ? ' (no instance in the registry)' : ` (registry: “${item.instance_name}”)`}. Nothing is applied for this VMID until only one
          host reports it: remove or renumber the guest on the host where it does not belong.
        </>
      );
  }
}

/** The few words naming an item in the "not applied" list. */
function label(item: DriftItem | undefined): string {
  if (!item) return '';
  if (item.kind === 'name_differs') return ` “${item.instance_name}” → “${item.guest_name}”${item.instance_stack === 'production' ? ' (production)' : ''}`;
  return ` “${item.guest_name}”${item.kind === 'conflict' ? ' (conflict)' : ''}`;
}

/**
 * The host's drift against the registry. Conflicts (a VMID two hosts report) name the other hosts and
 * are never applied; a production instance is renamed only by its own button, after a confirmation
 * naming it; "apply all" takes the rest, and what it leaves is information, not a failure.
 */
export function DriftCard({ host: h, operate, reload }: { host: HostDetail; operate: boolean; reload: () => void }) {
  const [outcome, setOutcome] = useState<Outcome>();
  const [confirmingAll, setConfirmingAll] = useState(false);
  const [confirmingRename, setConfirmingRename] = useState<number>();

  async function apply(body: DriftApply, present: (result: DriftResult) => Outcome) {
    setOutcome(undefined);
    try {
      setOutcome(present(await api('POST /api/hosts/:id/drift/apply', { params: { id: h.id }, body })));
    } catch (e) {
      setOutcome({ kind: 'error', text: messageOf(e) });
    }
    reload();
  }
  // An item asked for by name that the server did not apply is a failure of what was asked.
  const applyItem = (vmid: number) =>
    apply({ items: [{ vmid }] }, (r) => (r.skipped[0] ? { kind: 'error', text: `Not applied: ${sentence(r.skipped[0].error)}` } : { kind: 'success', text: 'Applied to the registry.' }));
  const applyAll = () => {
    const before = new Map(h.drift.map((d) => [d.vmid, d]));
    return apply({ all: true }, (r) => ({ kind: 'all', applied: r.applied.length, skipped: r.skipped.map((s) => ({ ...s, item: before.get(s.vmid) })) }));
  };

  const bulk = h.drift.filter(inBulk);
  const creates = bulk.filter((d) => d.kind === 'guest_without_instance').length;
  const productionRenames = h.drift.filter(isProductionRename).length;
  const conflicts = h.drift.filter((d) => d.kind === 'conflict').length;
  const leftOut = [productionRenames ? plural(productionRenames, 'production rename') : '', conflicts ? plural(conflicts, 'conflict') : ''].filter(Boolean);

  return (
    <div class="card">
      <h2>Drift against the registry</h2>
      {outcome && outcome.kind !== 'all' && <Notice kind={outcome.kind}>{outcome.text}</Notice>}
      {outcome?.kind === 'all' && (
        <>
          <Notice kind="success">{outcome.applied ? `Applied ${plural(outcome.applied, 'change')} to the registry.` : 'Nothing was applied.'}</Notice>
          {outcome.skipped.length > 0 && (
            <Notice kind="info">
              <div data-testid="drift-skipped">
                <strong>Left as they are ({outcome.skipped.length}):</strong>
                <ul class="install-notes">
                  {outcome.skipped.map((s) => (
                    <li key={s.vmid} data-vmid={s.vmid}>
                      VMID {s.vmid}
                      {label(s.item)}: {sentence(s.error)}
                    </li>
                  ))}
                </ul>
                {outcome.skipped.some((s) => s.item && isProductionRename(s.item)) && <p class="hint">Rename a production instance with its own button in the list below.</p>}
              </div>
            </Notice>
          )}
        </>
      )}
      {h.status === 'deleted' && <p class="muted">A removed host is no longer compared with the registry.</p>}
      {h.status !== 'deleted' && h.drift.length === 0 && <p class="muted">The registry matches this host.</p>}
      {h.drift.length > 0 && (
        <ul class="drift">
          {h.drift.map((item) => (
            <li key={`${item.kind}-${item.vmid}`} class={`drift-${item.kind}`} data-drift={item.kind} data-vmid={item.vmid}>
              <span class="mono">{item.vmid}</span> <DriftText item={item} />{' '}
              {operate && inBulk(item) && (
                <button type="button" onClick={() => applyItem(item.vmid)}>
                  {item.kind === 'guest_without_instance' ? 'Create instance' : 'Rename instance'}
                </button>
              )}
              {operate && isProductionRename(item) && confirmingRename !== item.vmid && (
                <button type="button" onClick={() => setConfirmingRename(item.vmid)}>
                  Rename production instance…
                </button>
              )}
              {operate && isProductionRename(item) && confirmingRename === item.vmid && (
                <Confirm
                  label={`Confirm renaming production instance ${item.instance_name}`}
                  question={`Rename the production instance “${item.instance_name}” (VMID ${item.vmid}) to “${item.guest_name}”, as ${h.hostname} reports it?`}
                  action={`Rename “${item.instance_name}”`}
                  onConfirm={() => {
                    setConfirmingRename(undefined);
                    void applyItem(item.vmid);
                  }}
                  onCancel={() => setConfirmingRename(undefined)}
                />
              )}
            </li>
          ))}
        </ul>
      )}
      {operate && bulk.length > 1 && !confirmingAll && (
        <button type="button" class="primary" onClick={() => setConfirmingAll(true)}>
          Apply all…
        </button>
      )}
      {operate && bulk.length > 1 && confirmingAll && (
        <Confirm
          label={`Confirm applying all drift from ${h.hostname}`}
          question={`Apply all ${bulk.length} changes from ${h.hostname} to the registry? ${[
            creates ? `${plural(creates, 'instance')} created` : '',
            bulk.length - creates ? `${plural(bulk.length - creates, 'instance')} renamed` : '',
          ]
            .filter(Boolean)
            .join(', ')}, as the host reports them.${leftOut.length ? ` Left out: ${leftOut.join(' and ')}.` : ''}`}
          action={`Apply ${bulk.length} changes`}
          danger={false}
          onConfirm={() => {
            setConfirmingAll(false);
            void applyAll();
          }}
          onCancel={() => setConfirmingAll(false)}
        />
      )}
    </div>
  );
}
