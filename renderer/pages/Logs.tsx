import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, messageOf } from '../api';
import { ACTION_LABELS, describeAudit, describeChanges, filterAudit, NO_ACTOR } from '../auditWords';
import { Empty, Field, Loading, Notice, PageTitle, Time } from '../components/ui';
import { useFlash, useLive } from '../live';

const PAGE = 100;

/** Newest first, `limit` a page and `before` the oldest id seen: the paging of /api/audit and /api/telemetry. */
function usePaged<T extends { id: number }>(page: (before: number | undefined) => Promise<T[]>) {
  const [rows, setRows] = useState<T[]>([]);
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);
  const [more, setMore] = useState(false);
  async function load(before?: number) {
    setLoading(true);
    try {
      const rows = await page(before);
      setRows((old) => (before === undefined ? rows : [...old, ...rows]));
      setMore(rows.length === PAGE);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setLoading(false);
    }
  }
  useEffect(() => void load(), []);
  /** A row that arrived live, put in its place by id (newest first); one already loaded is left alone. */
  const add = (row: T) => setRows((old) => (old.some((r) => r.id === row.id) ? old : [...old, row].sort((a, b) => b.id - a.id)));
  return { rows, error, loading, more, older: () => load(rows.at(-1)?.id), reload: () => load(), add };
}

const compact = (value: unknown) => (value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value));

/** The frame both logs share: errors, the empty state, the table, and paging back in time. */
function PagedLog<T extends { id: number }>(props: {
  log: ReturnType<typeof usePaged<T>>;
  /** The rows to show, when a filter narrows the loaded ones. */
  shown?: T[];
  empty: ComponentChildren;
  columns: string[];
  row: (row: T) => ComponentChildren;
  /** Rows to highlight for a moment (they just arrived live). */
  flashing?: Set<number | string>;
  olderLabel: string;
}) {
  const { log } = props;
  const shown = props.shown ?? log.rows;
  return (
    <>
      {log.error && <Notice kind="error">{log.error}</Notice>}
      {log.rows.length === 0 && !log.loading && !log.error && props.empty}
      {log.rows.length > 0 && shown.length === 0 && <Empty title="No loaded entry matches these filters">Clear a filter or show older entries.</Empty>}
      {shown.length > 0 && (
        <div class="table-wrap card">
          <table class="log stack">
            <thead>
              <tr>
                {props.columns.map((column) => (
                  <th scope="col" key={column}>
                    {column}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((row) => (
                <tr key={row.id} class={props.flashing?.has(row.id) ? 'flash' : undefined}>
                  {props.row(row)}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {log.loading && <Loading />}
      {log.more && !log.loading && (
        <button type="button" onClick={log.older}>
          {props.olderLabel}
        </button>
      )}
    </>
  );
}

/** A datetime-local box's value ("2026-11-23T09:30", local time) as epoch ms; undefined when empty or invalid. */
function localTime(value: string): number | undefined {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : ms;
}

export function AuditPage() {
  const log = usePaged((before) => api('GET /api/audit', { query: { limit: PAGE, before } }));
  const [flashing, flash] = useFlash(3_000);
  // Live: entries written while the page is open join the list (the stream sends them to administrators only).
  useLive(['audit.entry', 'reset'], (event) => {
    if (event.type === 'reset') return void log.reload();
    log.add(event.data);
    flash(event.data.id);
  });
  const [actor, setActor] = useState('');
  const [action, setAction] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const actors = useMemo(() => [...new Set(log.rows.map((row) => row.actor).filter((a): a is string => a !== null))].sort(), [log.rows]);
  const actions = useMemo(() => [...new Set([...Object.keys(ACTION_LABELS), ...log.rows.map((row) => row.action)])], [log.rows]);
  // "To" is a minute: everything up to its end is included.
  const toMs = localTime(to);
  const shown = filterAudit(log.rows, { actor, action, from: localTime(from), to: toMs === undefined ? undefined : toMs + 59_999 });
  const filtering = Boolean(actor || action || from || to);
  return (
    <section>
      <PageTitle title="Audit" />
      <p class="hint">Sign-ins, account changes and every management change, newest first.</p>
      <form class="filters audit-filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the audit log">
        <Field id="audit-actor" label="Who">
          <select id="audit-actor" value={actor} onChange={(e) => setActor(e.currentTarget.value)}>
            <option value="">anyone</option>
            {actors.map((name) => (
              <option value={name}>{name}</option>
            ))}
            <option value={NO_ACTOR}>nobody signed in (failed sign-ins, setup, recovery)</option>
          </select>
        </Field>
        <Field id="audit-action" label="What">
          <select id="audit-action" value={action} onChange={(e) => setAction(e.currentTarget.value)}>
            <option value="">everything</option>
            {actions.map((name) => (
              <option value={name}>{ACTION_LABELS[name] ?? name}</option>
            ))}
          </select>
        </Field>
        <Field id="audit-from" label="From">
          <input id="audit-from" type="datetime-local" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        </Field>
        <Field id="audit-to" label="To">
          <input id="audit-to" type="datetime-local" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </Field>
        {filtering && (
          <button
            type="button"
            class="clear"
            onClick={() => {
              setActor('');
              setAction('');
              setFrom('');
              setTo('');
            }}
          >
            Clear filters
          </button>
        )}
      </form>
      {filtering && log.rows.length > 0 && (
        <p class="counts" data-testid="audit-counts">
          {shown.length} of the {log.rows.length} loaded entries match{log.more ? '; older entries are not loaded yet' : ''}.
        </p>
      )}
      <PagedLog
        log={log}
        shown={shown}
        empty={<Empty title="Nothing recorded yet" />}
        columns={['When', 'What happened', 'Address', 'Raw entry']}
        olderLabel="Show older entries"
        flashing={flashing}
        row={(row) => (
          <>
            <td>
              <Time iso={row.at} />
            </td>
            <td class="what" data-action={row.action}>
              {describeAudit(row)}
            </td>
            <td class="mono" data-label="Address">
              {compact(row.ip)}
            </td>
            <td class="raw" data-label="Raw entry">
              <details>
                <summary>{row.action}</summary>
                {row.changes.length > 0 && (
                  <ul class="audit-changes" aria-label="Fields changed">
                    {describeChanges(row).map((line) => (
                      <li key={line}>{line}</li>
                    ))}
                  </ul>
                )}
                <pre class="mono detail">{JSON.stringify(row, null, 2)}</pre>
              </details>
            </td>
          </>
        )}
      />
    </section>
  );
}

export function TelemetryPage() {
  const log = usePaged((before) => api('GET /api/telemetry', { query: { limit: PAGE, before } }));
  return (
    <section>
      <PageTitle title="Telemetry" />
      <p class="hint">
        JSON events that your own scripts and services post to <code>/api/telemetry</code> with the telemetry token (FLEET_TELEMETRY_TOKEN), shown as
        received. The newest 10,000 are kept.
      </p>
      <PagedLog
        log={log}
        empty={
          <Empty title="No telemetry events yet">
            Set FLEET_TELEMETRY_TOKEN on the server, then have your scripts or services POST a JSON object (or an array of them) to /api/telemetry
            with that token in an Authorization: Bearer header.
          </Empty>
        }
        columns={['Received', 'Event']}
        olderLabel="Show older events"
        row={(row) => (
          <>
            <td>
              <Time iso={row.received_at} />
            </td>
            <td class="mono detail" data-label="Event">
              {compact(row.event)}
            </td>
          </>
        )}
      />
    </section>
  );
}
