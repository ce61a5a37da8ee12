import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { CopyButton, Field, Notice, Time, type useLoad } from '../../components/ui';
import type { CreatedEnrollmentToken, EnrollmentToken } from '../../../server/contract/hosts';

/**
 * Tokens that can still enroll a host, and behind a switch the ones that cannot any more (used up,
 * expired, revoked): those are kept for the record, not for use, and would otherwise pile up here.
 * A re-bind token names the host it re-binds (`hostNames`: id to hostname).
 */
export function EnrollmentTokens(props: { tokens: ReturnType<typeof useLoad<EnrollmentToken[]>>; manage: boolean; hostNames: ReadonlyMap<number, string> }) {
  const { tokens, manage, hostNames } = props;
  const [error, setError] = useState<string>();
  const [showAll, setShowAll] = useState(false);
  if (!tokens.data?.length) return null;
  const active = tokens.data.filter((t) => t.state === 'active');
  const finished = tokens.data.length - active.length;
  const shown = showAll ? tokens.data : active;
  async function revoke(id: number) {
    setError(undefined);
    try {
      await api('DELETE /api/hosts/enrollment-tokens/:id', { params: { id } });
    } catch (e) {
      setError(messageOf(e));
    }
    tokens.reload();
  }
  return (
    <div class="card">
      <h2>Enrollment tokens</h2>
      {error && <Notice kind="error">{error}</Notice>}
      {finished > 0 && (
        <label class="check">
          <input type="checkbox" checked={showAll} onChange={(e) => setShowAll(e.currentTarget.checked)} /> Show used-up, expired and revoked tokens ({finished})
        </label>
      )}
      {shown.length === 0 ? (
        <p class="muted" data-testid="no-active-tokens">
          No token can enroll a host now.{manage ? ' “Add a host” makes one.' : ''}
        </p>
      ) : (
        <div class="table-wrap">
          <table class="tokens stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Enrolls</th>
                <th scope="col">State</th>
                <th scope="col">Uses</th>
                <th scope="col">Expires</th>
                <th scope="col">Made by</th>
                {manage && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {shown.map((t) => (
                <tr key={t.id} data-token={t.id}>
                  <td data-label="Name">{t.name || <span class="muted">(unnamed)</span>}</td>
                  <td data-label="Enrolls" data-testid="token-enrolls">
                    {t.host_id === null ? (
                      'a new host'
                    ) : (
                      <>
                        re-binds <a href={`/hosts/${t.host_id}`}>{hostNames.get(t.host_id) ?? `host ${t.host_id}`}</a>
                      </>
                    )}
                  </td>
                  <td data-label="State">{t.state.replace('_', ' ')}</td>
                  <td data-label="Uses">
                    {t.uses} of {t.max_uses}
                  </td>
                  <td data-label="Expires">
                    <Time iso={t.expires_at} exact={false} />
                  </td>
                  <td data-label="Made by">{t.created_by ?? '—'}</td>
                  {manage && (
                    <td>
                      {t.state === 'active' && (
                        <button type="button" onClick={() => revoke(t.id)}>
                          Revoke
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** An install command shown once: what stands in its way, what it is for (`children`), the line and Copy. */
export function InstallCommand({ created, onDone, testId, children }: { created: CreatedEnrollmentToken; onDone: () => void; testId: string; children: ComponentChildren }) {
  return (
    <div class="secret" data-testid={testId}>
      {!!created.install_notes?.length && (
        <Notice kind="warning">
          <strong>This command cannot work from another machine yet:</strong>
          <ul class="install-notes" data-testid="install-notes">
            {created.install_notes.map((note) => (
              <li>{note}</li>
            ))}
          </ul>
        </Notice>
      )}
      <p>
        {children} It is shown once; it expires <Time iso={created.expires_at} exact={false} />.
      </p>
      <pre class="command">
        <code>
          {/* A line breaks only between words: a URL or token breaks nowhere (it scrolls in the box instead). */}
          {created.install_command.split(' ').map((word, i) => (
            <>
              {i > 0 && ' '}
              <span class="word">{word}</span>
            </>
          ))}
        </code>
      </pre>
      <div class="form-actions">
        <CopyButton text={created.install_command} primary />
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

/** Creates an enrollment token and shows the one install line, once, with what still stands in its way. */
export function AddHost({ onCreated, onClose }: { onCreated: () => void; onClose: () => void }) {
  const [name, setName] = useState('');
  const [hours, setHours] = useState('24');
  const [uses, setUses] = useState('1');
  const [created, setCreated] = useState<CreatedEnrollmentToken>();
  const [error, setError] = useState<string>();
  const [fields, setFields] = useState<Record<string, string>>({});

  async function create(e: Event) {
    e.preventDefault();
    setError(undefined);
    setFields({});
    try {
      const body = { name, expires_in_s: Math.round(Number(hours) * 3600), max_uses: Number(uses) };
      setCreated(await api('POST /api/hosts/enrollment-tokens', { body }));
      onCreated();
    } catch (err) {
      setError(messageOf(err));
      setFields((err as { fields?: Record<string, string> }).fields ?? {});
    }
  }

  return (
    <div class="card add-host" aria-labelledby="add-host-title">
      <h2 id="add-host-title">Add a host</h2>
      {!created && (
        <form onSubmit={create}>
          <div class="form-grid">
            <Field id="host-token-name" label="Name (optional)">
              <input id="host-token-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </Field>
            <Field id="host-token-hours" label="Valid for (hours)" error={fields.expires_in_s}>
              <input id="host-token-hours" inputMode="decimal" value={hours} onInput={(e) => setHours(e.currentTarget.value)} />
            </Field>
            <Field id="host-token-uses" label="Hosts it may enroll" error={fields.max_uses}>
              <input id="host-token-uses" inputMode="numeric" value={uses} onInput={(e) => setUses(e.currentTarget.value)} />
            </Field>
          </div>
          {error && <Notice kind="error">{error}</Notice>}
          <div class="form-actions">
            <button type="submit" class="primary">
              Create install command
            </button>
            <button type="button" onClick={onClose}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {created && (
        <InstallCommand created={created} onDone={onClose} testId="install-command">
          Run this as root on the hypervisor (a Proxmox node signs you in as root; elsewhere put <code>sudo</code> before <code>bash</code>).
        </InstallCommand>
      )}
    </div>
  );
}
