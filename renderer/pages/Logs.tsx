import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { AuditEntry } from '../../server/access/audit';
import type { TelemetryEvent } from '../../server/telemetry/repo';
import { api, messageOf } from '../api';
import { Empty, Loading, Notice, PageTitle, Time } from '../components/ui';

const PAGE = 100;

/** Newest first, `limit` a page and `before` the oldest id seen: the paging of /api/audit and /api/telemetry. */
function usePaged<T extends { id: number }>(path: string) {
  const [rows, setRows] = useState<T[]>([]);
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);
  const [more, setMore] = useState(false);
  async function load(before?: number) {
    setLoading(true);
    try {
      const page = await api<T[]>('GET', `${path}?limit=${PAGE}${before !== undefined ? `&before=${before}` : ''}`);
      setRows((old) => (before === undefined ? page : [...old, ...page]));
      setMore(page.length === PAGE);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setLoading(false);
    }
  }
  useEffect(() => void load(), [path]);
  return { rows, error, loading, more, older: () => load(rows.at(-1)?.id) };
}

const compact = (value: unknown) => (value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value));

/** The frame both logs share: errors, the empty state, the table, and paging back in time. */
function PagedLog<T extends { id: number }>(props: {
  log: ReturnType<typeof usePaged<T>>;
  empty: ComponentChildren;
  columns: string[];
  row: (row: T) => ComponentChildren;
  olderLabel: string;
}) {
  const { log } = props;
  return (
    <>
      {log.error && <Notice kind="error">{log.error}</Notice>}
      {log.rows.length === 0 && !log.loading && !log.error && props.empty}
      {log.rows.length > 0 && (
        <div class="table-wrap card">
          <table class="log">
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
              {log.rows.map((row) => (
                <tr key={row.id}>{props.row(row)}</tr>
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

export function AuditPage() {
  const log = usePaged<AuditEntry>('/api/audit');
  return (
    <section>
      <PageTitle title="Audit" />
      <p class="hint">Sign-ins, account changes and every management change, newest first.</p>
      <PagedLog
        log={log}
        empty={<Empty title="Nothing recorded yet" />}
        columns={['When', 'Who', 'Action', 'Target', 'Address', 'Detail']}
        olderLabel="Show older entries"
        row={(row) => (
          <>
            <td>
              <Time iso={row.at} />
            </td>
            <td>{compact(row.actor) || <span class="muted">—</span>}</td>
            <td class="mono">{row.action}</td>
            <td>{compact(row.target)}</td>
            <td class="mono">{compact(row.ip)}</td>
            <td class="mono detail">{compact(row.detail)}</td>
          </>
        )}
      />
    </section>
  );
}

export function TelemetryPage() {
  const log = usePaged<TelemetryEvent>('/api/telemetry');
  return (
    <section>
      <PageTitle title="Telemetry" />
      <p class="hint">Events sent by game reporters to POST /api/telemetry with the telemetry token. The newest 10,000 are kept.</p>
      <PagedLog
        log={log}
        empty={
          <Empty title="No telemetry events yet">
            Set FLEET_TELEMETRY_TOKEN on the server and point your reporters at /api/telemetry with that token.
          </Empty>
        }
        columns={['Received', 'Event']}
        olderLabel="Show older events"
        row={(row) => (
          <>
            <td>
              <Time iso={row.received_at} />
            </td>
            <td class="mono detail">{compact(row.event)}</td>
          </>
        )}
      />
    </section>
  );
}
