import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Empty, Loading, Notice, PageTitle, Time, useLoad } from '../components/ui';
import { useCoalesced, useLive } from '../live';
import { navigate, useLocation } from '../router';
import { CHECKS, type CheckName, type CheckOutcome, type InstanceHealth } from '../../server/contract/fleet';

/** How a check is headed in the table, and named in a detail row. */
export const CHECK_LABEL: Record<CheckName, string> = {
  running: 'Running',
  on_tailnet: 'On the tailnet',
  patched: 'Patched',
  in_automation: 'In automation',
  in_backup_job: 'In a backup job',
  backed_up_within_h: 'Backed up',
  agent_current: 'Agent current',
};

const MARK = { pass: '✓', fail: '✗', unknown: '?' } as const;

function Cell({ outcome }: { outcome: CheckOutcome | undefined }) {
  if (!outcome) return <td class="muted" title="not asked for by its policies">—</td>;
  return (
    <td data-result={outcome.result} title={outcome.reason}>
      <span class={`badge health-${outcome.result}`} aria-label={`${outcome.result}: ${outcome.reason}`}>
        {MARK[outcome.result]} {outcome.result}
      </span>
    </td>
  );
}

/**
 * The Fleet health page (PRODUCT.md "Fleet health: policies across every source"): every instance a
 * policy covers against the checks its policies ask for, failing first; each cell's reason on hover,
 * and all of an instance's reasons in a detail row opened by clicking it. `?collection_id=` and
 * `?failing=true` stay in the URL, so a view can be bookmarked.
 */
export function FleetHealthPage() {
  const { search } = useLocation();
  const query = new URLSearchParams(search);
  const collection = query.get('collection_id') ?? '';
  const failing = query.get('failing') === 'true';
  const health = useLoad(() => api('GET /api/fleet-health', { query: { collection_id: collection || undefined, failing: failing || undefined } }), [collection, failing]);
  // Live: what changes a check (a guest's status, a job's sync, an instance or host coming and going)
  // arrives as these events; the page reads the whole answer again, at most every 2 s.
  const reread = useCoalesced(health.reload, 2_000);
  useLive(['instance.created', 'instance.updated', 'instance.deleted', 'host.status', 'reset'], () => reread());
  const [open, setOpen] = useState<number | null>(null);
  const collections = useLoad(() => api('GET /api/collections'), []);

  const setQuery = (name: string, value: string) => {
    const next = new URLSearchParams(query);
    if (value) next.set(name, value);
    else next.delete(name);
    const text = next.toString();
    navigate(`/health${text ? `?${text}` : ''}`, { replace: true });
  };

  const data = health.data;
  const columns = data ? CHECKS.filter((c) => data.summary[c]) : [];
  return (
    <section>
      {/* The header link's word, as every page's title is; "Fleet health" in the lead. */}
      <PageTitle title="Health">{data && <span class="muted">checked <Time iso={data.checked_at} exact={false} /></span>}</PageTitle>
      <p class="muted">Fleet health: every instance a policy covers, checked against its guest, the tailnet, PatchMon, Semaphore, its backups and its agent.</p>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="health-collection">Collection</label>
          <select id="health-collection" value={collection} onChange={(e) => setQuery('collection_id', (e.target as HTMLSelectElement).value)}>
            <option value="">every instance</option>
            {collection && !collections.data?.some((c) => String(c.id) === collection) && <option value={collection}>collection {collection}</option>}
            {collections.data?.map((c) => (
              <option key={c.id} value={String(c.id)}>
                {c.name} ({c.count})
              </option>
            ))}
          </select>
        </div>
        <label class="check">
          <input type="checkbox" checked={failing} onChange={(e) => setQuery('failing', (e.target as HTMLInputElement).checked ? 'true' : '')} /> Only failing instances
        </label>
      </form>
      {health.error && <Notice kind="error">{health.error}</Notice>}
      {!data && !health.error && <Loading />}
      {data && (
        <>
          <p class="muted" data-testid="health-summary">
            {columns.map((c) => `${CHECK_LABEL[c]}: ${data.summary[c]!.fail} failing, ${data.summary[c]!.unknown} unknown, ${data.summary[c]!.pass} passing`).join(' · ')}
          </p>
          {data.instances.length === 0 ? (
            <Empty title={failing ? 'Nothing fails.' : 'No instance is covered by a policy.'}>
              Policies say which checks the instances of a stack or collection must pass: see <a href="/settings#policies">Settings → Fleet-health policies</a>.
            </Empty>
          ) : (
            <div class="table-wrap">
              <table data-testid="fleet-health">
                <thead>
                  <tr>
                    <th scope="col">Instance</th>
                    <th scope="col">Host</th>
                    {columns.map((c) => (
                      <th scope="col" key={c}>
                        {CHECK_LABEL[c]}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {data.instances.map((i) => (
                    <Row key={i.vmid} item={i} columns={columns} open={open === i.vmid} toggle={() => setOpen(open === i.vmid ? null : i.vmid)} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}

function Row({ item, columns, open, toggle }: { item: InstanceHealth; columns: CheckName[]; open: boolean; toggle: () => void }) {
  return (
    <>
      <tr data-vmid={item.vmid} class="clickable" onClick={toggle} aria-expanded={open}>
        <td>
          <a href={`/instances/${item.vmid}`} onClick={(e) => e.stopPropagation()}>
            {item.name}
          </a>{' '}
          <span class="muted mono">{item.vmid}</span>
        </td>
        <td>{item.host ? <a href={`/hosts/${item.host.id}`} onClick={(e) => e.stopPropagation()}>{item.host.name}</a> : <span class="muted">none</span>}</td>
        {columns.map((c) => (
          <Cell key={c} outcome={item.checks[c]} />
        ))}
      </tr>
      {open && (
        <tr class="detail-row" data-detail={item.vmid}>
          <td colSpan={columns.length + 2}>
            <dl class="props">
              {columns
                .filter((c) => item.checks[c])
                .map((c) => (
                  <Fragment key={c}>
                    <dt>{CHECK_LABEL[c]}</dt>
                    <dd data-check={c}>
                      <span class={`badge health-${item.checks[c]!.result}`}>{item.checks[c]!.result}</span> {item.checks[c]!.reason}
                    </dd>
                  </Fragment>
                ))}
            </dl>
          </td>
        </tr>
      )}
    </>
  );
}
