import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { Badge, Empty, Loading, Notice, PageTitle, useLoad } from '../components/ui';
import { plural, relativeTime, exactTime } from '../format';
import { atToInput, inputToAt } from '../asOf';
import { collectionFilter, parseView, toggleSort, viewQuery, visibleRange, withTag, type InstanceView, type Sort } from '../query';
import { useFlash, useLive } from '../live';
import { navigate, useLocation } from '../router';
import { useSession } from '../session';
import { FLAGS, STACKS, STATES, type ListedInstance as Instance } from '../../server/contract/registry';
import { TagChips } from '../components/Tags';
import { Lazy } from '../components/Lazy';

// The dialogs are a chunk of their own, fetched when one first opens: the first page loads without them.
const bulkEditDialog = () => import('./BulkEdit').then((m) => m.BulkEditDialog);
const saveCollectionDialog = () => import('./BulkEdit').then((m) => m.SaveCollectionDialog);

const ROW_HEIGHT = 44;
const SEARCH_DEBOUNCE_MS = 250;

const COLUMNS: { key: Sort | null; label: string; className: string }[] = [
  { key: 'vmid', label: 'VMID', className: 'col-vmid' },
  { key: 'name', label: 'Name', className: 'col-name' },
  { key: null, label: 'State', className: 'col-state' },
  { key: null, label: 'Stack', className: 'col-stack' },
  { key: null, label: 'Host', className: 'col-host' },
  { key: null, label: 'Tags', className: 'col-tags' },
  { key: null, label: 'Tailscale IP', className: 'col-ip' },
  { key: null, label: 'Services', className: 'col-flags' },
  { key: 'updated_at', label: 'Updated', className: 'col-updated' },
  { key: 'created_at', label: 'Created', className: 'col-created' },
];

export function InstancesPage() {
  const session = useSession();
  const { search: urlSearch } = useLocation();
  const view = parseView(urlSearch);
  const [text, setText] = useState(view.search);
  const searchRef = useRef<HTMLInputElement>(null);

  const setView = (next: InstanceView) => navigate(`/instances${viewQuery(next)}`, { replace: true });

  // Search as you type: the URL (and so the request) follows the box after a pause in typing.
  const sent = useRef(view.search);
  useEffect(() => {
    if (text === view.search) return;
    const timer = setTimeout(() => {
      sent.current = text;
      setView({ ...parseView(location.search), search: text });
    }, SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text]);
  // Back/forward, a link or Clear filters may change the URL under the box. A search the box sent
  // itself is not written back: a letter typed while the URL caught up would be lost.
  useEffect(() => {
    if (view.search !== sent.current) setText(view.search);
    sent.current = view.search;
  }, [view.search]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
      if (target.closest('input, textarea, select, [contenteditable]')) return;
      event.preventDefault();
      searchRef.current?.focus();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  const query = viewQuery(view);
  const list = useLoad(
    () =>
      api('GET /api/instances', {
        query: { search: view.search, state: view.state, stack: view.stack, host_id: view.host, tag: view.tags, sort: view.sort === 'name' ? undefined : view.sort, order: view.order === 'desc' ? 'desc' : undefined, at: view.at || undefined },
      }),
    [query],
  );
  const stacks = useLoad(() => api('GET /api/instances/stacks'), []);
  // Live: another operator's change updates its row in place and flashes it; a new instance reloads the view (its sort and filter decide where it goes).
  const [flashing, flash] = useFlash();
  useLive(['instance.created', 'instance.updated', 'instance.deleted', 'reset'], (event) => {
    // The past does not change: a live event is about the registry now.
    if (view.at) return;
    if (event.type === 'instance.updated') {
      const { instance, previous_vmid } = event.data;
      list.update((rows) => rows.map((row) => (row.vmid === previous_vmid ? instance : row)));
      flash(instance.vmid);
    } else if (event.type === 'instance.deleted') {
      const { vmid } = event.data;
      list.update((rows) => rows.filter((row) => row.vmid !== vmid));
    } else {
      if (event.type === 'instance.created') flash(event.data.instance.vmid);
      list.reload();
    }
  });
  const stackOptions = [...new Set([...STACKS, ...(stacks.data ?? [])])];
  const filtered = Boolean(view.search || view.state || view.stack || view.host || view.tags.length);
  // Rows picked for a bulk edit, by vmid; only what the list shows now can stay picked.
  const [picked, setPicked] = useState<ReadonlySet<number>>(new Set());
  const [dialog, setDialog] = useState<'bulk' | 'collection' | null>(null);
  const [done, setDone] = useState<string>();
  // Nothing is changed from the past: no picking rows for a bulk edit while viewing it.
  const canOperate = session.can('fleet.operate') && !view.at;
  useEffect(() => {
    const shown = new Set((list.data ?? []).map((i) => i.vmid));
    setPicked((p) => ([...p].every((v) => shown.has(v)) ? p : new Set([...p].filter((v) => shown.has(v)))));
  }, [list.data]);
  const pickTag = (tag: string) => setView(withTag(view, tag));

  const counts = useMemo(() => {
    const byState: Record<string, number> = {};
    for (const instance of list.data ?? []) byState[instance.state] = (byState[instance.state] ?? 0) + 1;
    return byState;
  }, [list.data]);

  return (
    <section>
      <PageTitle title="Instances">
        {session.can('fleet.operate') && !view.at && (
          <a class="button primary" href="/instances/new">
            New instance
          </a>
        )}
      </PageTitle>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field grow">
          <label for="search">Search</label>
          <input
            id="search"
            ref={searchRef}
            type="search"
            placeholder="Name, VMID or stack  ( / )"
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            aria-keyshortcuts="/"
          />
        </div>
        <div class="field">
          <label for="state-filter">State</label>
          <select id="state-filter" value={view.state} onChange={(e) => setView({ ...view, state: e.currentTarget.value })}>
            <option value="">All states</option>
            {STATES.map((state) => (
              <option value={state}>{state}</option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="stack-filter">Stack</label>
          <select id="stack-filter" value={view.stack} onChange={(e) => setView({ ...view, stack: e.currentTarget.value })}>
            <option value="">All stacks</option>
            {stackOptions.map((stack) => (
              <option value={stack}>{stack}</option>
            ))}
          </select>
        </div>
        <div class="field">
          <label class="check" for="host-none">
            <input
              id="host-none"
              type="checkbox"
              disabled={Boolean(view.at)}
              title={view.at ? 'Where guests ran is not kept in history' : undefined}
              checked={view.host === 'none'}
              onChange={(e) => setView({ ...view, host: e.currentTarget.checked ? 'none' : '' })}
            />{' '}
            not reported by any host
          </label>
        </div>
        <div class="field">
          <label for="as-of">As of (UTC)</label>
          <input
            id="as-of"
            type="datetime-local"
            step="1"
            value={atToInput(view.at)}
            onChange={(e) => setView({ ...view, at: inputToAt(e.currentTarget.value), host: inputToAt(e.currentTarget.value) ? '' : view.host })}
          />
        </div>
        {filtered && (
          <button type="button" class="link clear" onClick={() => (setText(''), setView({ ...view, search: '', state: '', stack: '', host: '', tags: [] }))}>
            Clear filters
          </button>
        )}
        {filtered && session.can('content.manage') && !view.at && (
          <button type="button" class="clear" onClick={() => setDialog('collection')}>
            Save as collection
          </button>
        )}
      </form>
      {view.tags.length > 0 && (
        <p class="tag-filter" data-testid="tag-filter">
          Tagged
          {view.tags.map((tag) => (
            <button type="button" class="tag" title={`Stop filtering by ${tag}`} aria-label={`Remove tag filter ${tag}`} onClick={() => setView({ ...view, tags: view.tags.filter((t) => t !== tag) })}>
              {tag}
            </button>
          ))}
        </p>
      )}
      {canOperate && picked.size > 0 && (
        <div class="selection-bar" data-testid="selection-bar">
          <strong>{plural(picked.size, 'instance')} selected</strong>
          <button type="button" class="primary" onClick={() => setDialog('bulk')}>
            Bulk edit
          </button>
          <button type="button" class="link" onClick={() => setPicked(new Set())}>
            Clear selection
          </button>
        </div>
      )}
      {done && <Notice kind="success">{done}</Notice>}
      {dialog === 'bulk' && (
        <Lazy
          key="bulk-edit"
          load={bulkEditDialog}
          props={{
            vmids: [...picked].sort((a, b) => a - b),
            onClose: () => setDialog(null),
            onDone: (updated: number) => {
              setDialog(null);
              setPicked(new Set());
              setDone(`${plural(updated, 'instance')} changed.`);
              list.reload();
            },
          }}
        />
      )}
      {dialog === 'collection' && <Lazy key="save-collection" load={saveCollectionDialog} props={{ filter: collectionFilter(view), onClose: () => setDialog(null) }} />}

      {view.at && (
        <Notice kind="info">
          <strong data-testid="as-of-banner">Showing the registry as of {exactTime(view.at)}</strong>: each instance as it was then, rebuilt
          from its history; nothing can be changed here.{' '}
          <button type="button" class="link" onClick={() => setView({ ...view, at: '' })}>
            Back to now
          </button>
        </Notice>
      )}
      {list.error && <Notice kind="error">{list.error}</Notice>}
      {list.data && (
        <p class="counts" aria-live="polite" data-testid="counts">
          <strong>{plural(list.data.length, 'instance')}</strong>
          {filtered ? ' match' : ''}
          {STATES.filter((s) => counts[s]).map((state) => (
            <span class="count">
              <Badge value={state} /> {counts[state]}
            </span>
          ))}
        </p>
      )}
      {!list.data && list.loading && <Loading />}
      {list.data && list.data.length === 0 && !filtered && view.at && <Empty title="No instances existed then" />}
      {list.data && list.data.length === 0 && !filtered && !view.at && (
        <Empty title="No instances yet">
          {session.can('fleet.operate') ? (
            <>
              <a href="/instances/new">Add the first instance</a>, or import a backup in <a href="/settings">Settings</a>.
            </>
          ) : (
            'An operator or administrator can add instances.'
          )}
        </Empty>
      )}
      {list.data && list.data.length === 0 && filtered && (
        <Empty title="No instances match this search">Try fewer words or clear the filters.</Empty>
      )}
      {list.data && list.data.length > 0 && (
        <InstanceTable
          rows={list.data}
          flashing={flashing}
          view={view}
          onSort={(sort) => setView(toggleSort(view, sort))}
          stale={list.loading}
          onTag={pickTag}
          selection={canOperate ? { picked, onChange: setPicked } : undefined}
        />
      )}
    </section>
  );
}

/** Renders only the rows in view, so 10,000 instances scroll like 50. */
interface Selection {
  picked: ReadonlySet<number>;
  onChange: (picked: ReadonlySet<number>) => void;
}

function InstanceTable(props: {
  rows: Instance[];
  flashing: Set<number | string>;
  view: InstanceView;
  onSort: (sort: Sort) => void;
  stale: boolean;
  onTag: (tag: string) => void;
  /** Row checkboxes, for those who may bulk-edit. */
  selection: Selection | undefined;
}) {
  const { rows, flashing, view, onSort, stale, onTag, selection } = props;
  const toggle = (vmid: number, on: boolean) => {
    if (!selection) return;
    const next = new Set(selection.picked);
    if (on) next.add(vmid);
    else next.delete(vmid);
    selection.onChange(next);
  };
  const allPicked = selection !== undefined && rows.length > 0 && rows.every((r) => selection.picked.has(r.vmid));
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(800);
  useEffect(() => {
    const element = scroller.current;
    if (!element) return;
    const measure = () => setViewport(element.clientHeight || 800);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  let frame = 0;
  const onScroll = () => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => setScrollTop(scroller.current?.scrollTop ?? 0));
  };
  const { first, last } = visibleRange(scrollTop, viewport, ROW_HEIGHT, rows.length);

  return (
    <div class={`table-scroll${stale ? ' stale' : ''}`} ref={scroller} onScroll={onScroll} data-testid="instance-scroller">
      <table class="instances" aria-rowcount={rows.length + 1}>
        <thead>
          <tr>
            {selection && (
              <th scope="col" class="col-select">
                <input
                  type="checkbox"
                  aria-label="Select every instance shown"
                  checked={allPicked}
                  onChange={(e) => selection.onChange(e.currentTarget.checked ? new Set(rows.map((r) => r.vmid)) : new Set())}
                />
              </th>
            )}
            {COLUMNS.map((column) => (
              <th
                scope="col"
                class={column.className}
                aria-sort={column.key && view.sort === column.key ? (view.order === 'asc' ? 'ascending' : 'descending') : undefined}
              >
                {column.key ? (
                  <button type="button" class="sort" onClick={() => onSort(column.key!)}>
                    {column.label}
                    <span aria-hidden="true" class="arrow">
                      {view.sort === column.key ? (view.order === 'asc' ? '▲' : '▼') : '↕'}
                    </span>
                  </button>
                ) : (
                  column.label
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {first > 0 && <tr class="spacer" aria-hidden="true" style={{ height: `${first * ROW_HEIGHT}px` }} />}
          {rows.slice(first, last).map((instance, i) => (
            <tr key={instance.vmid} aria-rowindex={first + i + 2} data-vmid={instance.vmid} class={flashing.has(instance.vmid) ? 'flash' : undefined}>
              {selection && (
                <td class="col-select">
                  <input type="checkbox" aria-label={`Select ${instance.name}`} checked={selection.picked.has(instance.vmid)} onChange={(e) => toggle(instance.vmid, e.currentTarget.checked)} />
                </td>
              )}
              <td class="col-vmid">{instance.vmid}</td>
              <td class="col-name">
                <InstanceLink instance={instance} at={view.at} />
              </td>
              <td class="col-state">
                <Badge value={instance.state} />
              </td>
              <td class="col-stack">{instance.stack}</td>
              <td class="col-host">
                {instance.host ? (
                  <>
                    <a href={`/hosts/${instance.host.id}`}>{instance.host.name}</a> <span class="muted" data-testid={`guest-status-${instance.vmid}`}>{instance.guest_status}</span>
                  </>
                ) : (
                  <span class="muted">—</span>
                )}
              </td>
              <td class="col-tags">
                <TagChips tags={instance.tags} onPick={onTag} />
              </td>
              <td class="col-ip mono" title={instance.tailscale_ipv6 ? `Tailnet IPv6 ${instance.tailscale_ipv6}` : undefined}>
                {instance.tailscale_ip || <span class="muted">—</span>}
              </td>
              <td class="col-flags">
                <Flags instance={instance} />
              </td>
              <td class="col-updated">
                <time datetime={instance.updated_at} title={exactTime(instance.updated_at)}>
                  {relativeTime(instance.updated_at)}
                </time>
              </td>
              <td class="col-created">
                <time datetime={instance.created_at} title={exactTime(instance.created_at)}>
                  {relativeTime(instance.created_at)}
                </time>
              </td>
            </tr>
          ))}
          {last < rows.length && <tr class="spacer" aria-hidden="true" style={{ height: `${(rows.length - last) * ROW_HEIGHT}px` }} />}
        </tbody>
      </table>
    </div>
  );
}

/** Now: the instance's page. As of a past instant: its page as it was then, under the vmid it has now; nothing for one deleted since. */
function InstanceLink({ instance, at }: { instance: Instance; at: string }) {
  if (!at) return <a href={`/instances/${instance.vmid}`}>{instance.name}</a>;
  if (instance.current_vmid == null) {
    return (
      <>
        {instance.name} <span class="muted">(deleted since)</span>
      </>
    );
  }
  return <a href={`/instances/${instance.current_vmid}?at=${encodeURIComponent(at)}`}>{instance.name}</a>;
}

export function Flags({ instance }: { instance: Pick<Instance, (typeof FLAGS)[number]> }) {
  const on = FLAGS.filter((flag) => instance[flag] === 1);
  if (on.length === 0) return <span class="muted">none</span>;
  const names = on.map((flag) => flag.replace('_', ' '));
  return (
    <span class="flags" title={names.join(', ')}>
      {names.map((name) => (
        <span class="flag">{name}</span>
      ))}
    </span>
  );
}
