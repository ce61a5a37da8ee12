import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../api';
import { Empty, Loading, Notice, PageTitle, Time } from '../components/ui';

const PAGE = 100;

type Row = Record<string, unknown> & { id?: number };

/** Lists answer either an array or an object holding one (`events`, `entries`, `items`). */
function rowsOf(data: unknown): Row[] {
  if (Array.isArray(data)) return data as Row[];
  if (data && typeof data === 'object') {
    for (const key of ['events', 'entries', 'items']) {
      const value = (data as Record<string, unknown>)[key];
      if (Array.isArray(value)) return value as Row[];
    }
  }
  return [];
}

/** Newest first, `limit` a page and `before` the oldest id seen: the paging of /api/audit and /api/telemetry. */
function usePaged(path: string) {
  const [rows, setRows] = useState<Row[]>([]);
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);
  const [more, setMore] = useState(false);
  async function load(before?: number) {
    setLoading(true);
    try {
      const page = rowsOf(await api('GET', `${path}?limit=${PAGE}${before !== undefined ? `&before=${before}` : ''}`));
      setRows((old) => (before === undefined ? page : [...old, ...page]));
      setMore(page.length === PAGE);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setLoading(false);
    }
  }
  useEffect(() => void load(), [path]);
  const oldest = rows.at(-1)?.id;
  return { rows, error, loading, more, older: () => load(typeof oldest === 'number' ? oldest : undefined) };
}

const compact = (value: unknown) => (value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value));

export function AuditPage() {
  const log = usePaged('/api/audit');
  return (
    <section>
      <PageTitle title="Audit" />
      <p class="hint">Sign-ins, account changes and every management change, newest first.</p>
      {log.error && <Notice kind="error">{log.error}</Notice>}
      {log.rows.length === 0 && !log.loading && !log.error && <Empty title="Nothing recorded yet" />}
      {log.rows.length > 0 && (
        <div class="table-wrap card">
          <table class="log">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Address</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {log.rows.map((row) => (
                <tr key={row.id}>
                  <td>
                    <Time iso={row.at as string} />
                  </td>
                  <td>{compact(row.actor) || <span class="muted">—</span>}</td>
                  <td class="mono">{compact(row.action)}</td>
                  <td>{compact(row.target)}</td>
                  <td class="mono">{compact(row.ip)}</td>
                  <td class="mono detail">{compact(row.detail)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {log.loading && <Loading />}
      {log.more && !log.loading && (
        <button type="button" onClick={log.older}>
          Show older entries
        </button>
      )}
    </section>
  );
}

const TIME_KEYS = ['received_at', 'at', 'created_at', 'timestamp'];

export function TelemetryPage() {
  const log = usePaged('/api/telemetry');
  return (
    <section>
      <PageTitle title="Telemetry" />
      <p class="hint">Events sent by game reporters to POST /api/telemetry with the telemetry token. The newest 10,000 are kept.</p>
      {log.error && <Notice kind="error">{log.error}</Notice>}
      {log.rows.length === 0 && !log.loading && !log.error && (
        <Empty title="No telemetry events yet">
          Set FLEET_TELEMETRY_TOKEN on the server and point your reporters at /api/telemetry with that token.
        </Empty>
      )}
      {log.rows.length > 0 && (
        <div class="table-wrap card">
          <table class="log">
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col">Event</th>
              </tr>
            </thead>
            <tbody>
              {log.rows.map((row) => {
                const timeKey = TIME_KEYS.find((key) => typeof row[key] === 'string');
                const payload = 'payload' in row ? row.payload : row;
                return (
                  <tr key={row.id}>
                    <td>{timeKey ? <Time iso={row[timeKey] as string} /> : '—'}</td>
                    <td class="mono detail">{compact(payload)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {log.loading && <Loading />}
      {log.more && !log.loading && (
        <button type="button" onClick={log.older}>
          Show older events
        </button>
      )}
    </section>
  );
}
