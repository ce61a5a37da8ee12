import { useState } from 'preact/hooks';
import { ROLES } from '../../server/contract/access';
import type { ApiToken, CreatedApiToken } from '../../server/contract/tokens';
import { api, ApiError, messageOf } from '../api';
import { CopyButton, Empty, Field, Loading, Notice, PageTitle, Time, useLoad } from '../components/ui';
import { useSession, type Role } from '../session';

const DAY_MS = 24 * 60 * 60 * 1000;
const EXPIRIES: Array<{ label: string; days: number | null }> = [
  { label: '30 days', days: 30 },
  { label: '90 days', days: 90 },
  { label: '1 year', days: 365 },
  { label: 'never', days: null },
];

/** Personal API tokens for scripts: create (shown once), list with last use and expiry, revoke. */
export function TokensPage() {
  const session = useSession();
  const isAdmin = session.can('users.manage');
  const [everyone, setEveryone] = useState(false);
  const tokens = useLoad(() => api('GET /api/tokens', { query: { user: everyone ? 'all' : undefined } }), [everyone]);
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();
  /** The token itself is shown once, right after it is made, and never again. */
  const [created, setCreated] = useState<CreatedApiToken>();

  async function revoke(token: ApiToken) {
    setMessage(undefined);
    setCreated(undefined);
    if (!confirm(`Revoke the token “${token.name}”? Scripts using it stop working at once.`)) return;
    try {
      await api('DELETE /api/tokens/:id', { params: { id: token.id } });
      setMessage({ kind: 'success', text: `Token “${token.name}” revoked.` });
    } catch (e) {
      setMessage({ kind: 'error', text: messageOf(e) });
    }
    tokens.reload();
  }

  return (
    <section>
      <PageTitle title="API tokens" />
      <p class="muted">
        Scripts send a token as <code>Authorization: Bearer hfp_…</code>. A token acts as you, with the role you choose here and never more
        than your own role; it cannot manage users, tokens or passwords. The API is described at <a href="/api/openapi.json">/api/openapi.json</a>.
      </p>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {created && (
        <div class="notice notice-info secret" role="status" data-testid="new-token">
          Token <strong>{created.name}</strong>: <code>{created.token}</code>
          <div class="copy-row">
            <CopyButton text={created.token} label="Copy token" />
            <span class="hint">Shown once: copy it now. Only its hash is kept.</span>
          </div>
        </div>
      )}
      <CreateToken
        ownRole={session.user?.role ?? 'viewer'}
        onCreated={(token) => {
          setMessage(undefined);
          setCreated(token);
          tokens.reload();
        }}
      />
      {isAdmin && (
        <label class="check">
          <input type="checkbox" checked={everyone} onChange={(e) => setEveryone(e.currentTarget.checked)} /> Show every user’s tokens
        </label>
      )}
      {tokens.error && <Notice kind="error">{tokens.error}</Notice>}
      {!tokens.data && !tokens.error && <Loading />}
      {tokens.data && tokens.data.length === 0 && <Empty title="No tokens yet." />}
      {tokens.data && tokens.data.length > 0 && (
        <div class="table-wrap card">
          <table class="tokens stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                {everyone && <th scope="col">User</th>}
                <th scope="col">Role</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Last use</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {tokens.data.map((token) => (
                <tr key={token.id} data-token={token.name}>
                  <td data-label="Name">
                    <strong>{token.name}</strong>
                  </td>
                  {everyone && <td data-label="User">{token.user.username}</td>}
                  <td data-label="Role">{token.role}</td>
                  <td data-label="Created">
                    <Time iso={token.created_at} exact={false} />
                  </td>
                  <td data-label="Expires">{token.expires_at ? <Time iso={token.expires_at} exact={false} /> : <span class="muted">never</span>}</td>
                  <td data-label="Last use">
                    <Time iso={token.last_used_at} exact={false} />
                    {token.last_used_ip && <div class="muted">from {token.last_used_ip}</div>}
                  </td>
                  <td>
                    {/* A flex box inside the cell: a flex table cell loses its row's border. */}
                    <div class="row-actions">
                      <button type="button" onClick={() => revoke(token)}>
                        Revoke
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function CreateToken({ ownRole, onCreated }: { ownRole: Role; onCreated: (token: CreatedApiToken) => void }) {
  const allowed = ROLES.slice(0, ROLES.indexOf(ownRole) + 1);
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [days, setDays] = useState<string>('90');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();

  async function submit(event: Event) {
    event.preventDefault();
    setErrors({});
    setError(undefined);
    const expires_at = days === '' ? null : new Date(Date.now() + Number(days) * DAY_MS).toISOString();
    try {
      const token = await api('POST /api/tokens', { body: { name, role, expires_at } });
      setName('');
      onCreated(token);
    } catch (e) {
      if (e instanceof ApiError && Object.keys(e.fields).length) setErrors(e.fields);
      else setError(messageOf(e));
    }
  }

  return (
    <form class="card form" onSubmit={submit} noValidate>
      <h2>Create a token</h2>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="form-grid">
        <Field id="token-name" label="Name" error={errors.name} hint="What uses it, e.g. “nightly backup”">
          <input id="token-name" autocomplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="token-role" label="Role" error={errors.role}>
          <select id="token-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {allowed.map((r) => (
              <option value={r}>{r}</option>
            ))}
          </select>
        </Field>
        <Field id="token-expiry" label="Expires after" error={errors.expires_at}>
          <select id="token-expiry" value={days} onChange={(e) => setDays(e.currentTarget.value)}>
            {EXPIRIES.map((x) => (
              <option value={x.days === null ? '' : String(x.days)}>{x.label}</option>
            ))}
          </select>
        </Field>
      </div>
      <button type="submit" class="primary">
        Create token
      </button>
    </form>
  );
}
