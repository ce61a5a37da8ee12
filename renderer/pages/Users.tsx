import { useState } from 'preact/hooks';
import { plural } from '../format';
import { api, ApiError, messageOf } from '../api';
import { Confirm, CopyButton, Field, Loading, Notice, PageTitle, Time, useLoad } from '../components/ui';
import { ROLES, type CreatedUser } from '../../server/contract/access';
import type { UserSecondFactors } from '../../server/contract/signin';
import { useSession, type Account, type Role } from '../session';

/** The one-click account actions that take something away: each asks first, naming the account. */
type Risky = 'disable' | 'reset' | 'revoke' | 'factors';
const RISKY: Record<Risky, { action: (u: Account) => string; question: (u: Account, self: boolean) => string }> = {
  disable: {
    action: (u) => `Disable ${u.username}`,
    question: (u, self) => `Disable ${u.username}? ${self ? 'You are' : 'They are'} signed out at once and cannot sign in until enabled again.`,
  },
  reset: {
    action: () => 'Reset password',
    question: (u, self) =>
      `Reset the password of ${u.username}? ${self ? 'Your' : 'Their'} password stops working and ${self ? 'your' : 'their'} sessions end; you get a temporary password to pass on.`,
  },
  revoke: {
    action: () => 'Sign out everywhere',
    question: (u) => `Sign ${u.username} out everywhere? Every session of theirs ends; they can sign in again.`,
  },
  factors: {
    action: () => 'Clear second factor',
    question: (u, self) =>
      `Clear the second factor of ${u.username}? ${self ? 'Your' : 'Their'} two-step sign-in and passkeys are removed and ${self ? 'your' : 'their'} sessions end; the password alone signs in again.`,
  },
};

/** What an account signs in with beyond its password: "TOTP and 2 passkeys", "single sign-on", "password only". */
function signInWords(f: UserSecondFactors): string {
  const parts = [f.totp ? 'TOTP' : '', f.passkeys ? plural(f.passkeys, 'passkey') : '', f.oidc ? 'single sign-on' : ''].filter(Boolean);
  return parts.length ? parts.join(' and ') : 'password only';
}

/** An administrator clears TOTP and passkeys (a provider's sign-in is the provider's). */
const hasClearable = (f: UserSecondFactors) => f.totp || f.passkeys > 0;

export function UsersPage() {
  const session = useSession();
  const users = useLoad(() => api('GET /api/users'), []);
  const factors = useLoad(() => api('GET /api/users/second-factors'), []);
  const factorsOf = new Map(factors.data?.map((f) => [f.user_id, f]));
  /** Known to have neither TOTP nor a passkey (while the factors load, the button stays on). */
  const nothingToClear = (user: Account) => {
    const f = factorsOf.get(user.id);
    return f !== undefined && !hasClearable(f);
  };
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();
  /** A temporary password is shown once, right after it is made, and never again. */
  const [secret, setSecret] = useState<{ username: string; password: string }>();

  /** A role picked in a row's list, applied only once confirmed. */
  const [pending, setPending] = useState<{ id: number; role: Role }>();
  /** A disable, reset or revoke asked for in a row, done only once confirmed. */
  const [asking, setAsking] = useState<{ id: number; kind: Risky }>();

  async function act(user: Account, action: () => Promise<unknown>, done: string) {
    setMessage(undefined);
    setSecret(undefined);
    setPending(undefined);
    setAsking(undefined);
    try {
      await action();
      setMessage({ kind: 'success', text: done });
    } catch (e) {
      setMessage({ kind: 'error', text: refusal(user, e) });
    }
    users.reload();
    factors.reload();
  }

  function ask(user: Account, kind: Risky) {
    setMessage(undefined);
    setPending(undefined);
    setAsking({ id: user.id, kind });
  }

  async function confirmed(user: Account, kind: Risky) {
    if (kind === 'disable') return act(user, () => api('PATCH /api/users/:id', { params: { id: user.id }, body: { enabled: false } }), `${user.username} disabled.`);
    if (kind === 'revoke') return act(user, () => api('POST /api/users/:id/revoke-sessions', { params: { id: user.id } }), `${user.username} was signed out everywhere.`);
    if (kind === 'factors') return act(user, () => api('DELETE /api/users/:id/second-factor', { params: { id: user.id } }), `The second factor of ${user.username} was cleared.`);
    setAsking(undefined);
    setMessage(undefined);
    try {
      const { temporary_password } = await api('POST /api/users/:id/reset-password', { params: { id: user.id } });
      setSecret({ username: user.username, password: temporary_password });
    } catch (e) {
      setMessage({ kind: 'error', text: refusal(user, e) });
    }
    users.reload();
  }

  return (
    <section>
      <PageTitle title="Users" />
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {secret && (
        <div class="notice notice-info secret" role="status" data-testid="temporary-password">
          Temporary password for <strong>{secret.username}</strong>: <code>{secret.password}</code>
          <div class="copy-row">
            <CopyButton text={secret.password} label="Copy password" />
            <span class="hint">Shown once. Pass it on safely; they must choose a new password when they sign in.</span>
          </div>
        </div>
      )}
      <CreateUser
        onCreated={(created) => {
          setMessage(undefined);
          setSecret({ username: created.user.username, password: created.temporary_password });
          // The row shows at once from the answer; the reads then bring it in the list's order, with its
          // sign-in factors (none yet), so its row is whole without a reload.
          users.update((list) => [...list.filter((u) => u.id !== created.user.id), created.user]);
          users.reload();
          factors.reload();
        }}
      />
      {users.error && <Notice kind="error">{users.error}</Notice>}
      {!users.data && !users.error && <Loading />}
      {users.data && (
        <div class="table-wrap card">
          <table class="users stack">
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {users.data.map((user) => (
                <tr key={user.id} data-user={user.username}>
                  <td data-label="User">
                    <strong>{user.username}</strong>
                    <div class="muted">{user.display_name}</div>
                  </td>
                  <td data-label="Role">
                    <label class="visually-hidden" for={`role-${user.id}`}>
                      Role of {user.username}
                    </label>
                    <select
                      id={`role-${user.id}`}
                      value={pending?.id === user.id ? pending.role : user.role}
                      onChange={(e) => {
                        const role = e.currentTarget.value as Role;
                        setAsking(undefined);
                        setPending(role === user.role ? undefined : { id: user.id, role });
                      }}
                    >
                      {ROLES.map((role) => (
                        <option value={role}>{role}</option>
                      ))}
                    </select>
                    {pending?.id === user.id && (
                      <div class="confirm role-confirm" role="group" aria-label={`Confirm the role change of ${user.username}`}>
                        <span>
                          Make {user.username} {pending.role}?{user.id === session.user?.id ? ' Your own session ends; sign in again afterwards.' : ' Their sessions end.'}
                        </span>
                        <button
                          type="button"
                          class="primary"
                          onClick={() =>
                            act(user, () => api('PATCH /api/users/:id', { params: { id: user.id }, body: { role: pending.role } }), `${user.username} is now ${pending.role}.`)
                          }
                        >
                          Change role
                        </button>
                        <button type="button" onClick={() => setPending(undefined)}>
                          Cancel
                        </button>
                      </div>
                    )}
                  </td>
                  <td data-label="Status">
                    {user.enabled ? 'enabled' : <span class="pill off">disabled</span>}
                    {user.must_change_password && <div class="muted">must change password</div>}
                    {factorsOf.has(user.id) && (
                      <div class="muted" data-testid="sign-in-factors">
                        {signInWords(factorsOf.get(user.id)!)}
                      </div>
                    )}
                  </td>
                  <td data-label="Last sign-in">
                    <Time iso={user.last_login_at} exact={false} />
                  </td>
                  <td class="actions-cell" data-label="Actions">
                    <div class="row-actions">
                      {user.enabled ? (
                        <button type="button" onClick={() => ask(user, 'disable')}>
                          Disable…
                        </button>
                      ) : (
                        <button type="button" onClick={() => act(user, () => api('PATCH /api/users/:id', { params: { id: user.id }, body: { enabled: true } }), `${user.username} enabled.`)}>
                          Enable
                        </button>
                      )}
                      <button type="button" onClick={() => ask(user, 'reset')}>
                        Reset password…
                      </button>
                      <button
                        type="button"
                        disabled={user.id === session.user?.id}
                        title={user.id === session.user?.id ? 'Use Sign out for your own session' : undefined}
                        onClick={() => ask(user, 'revoke')}
                      >
                        Revoke sessions…
                      </button>
                      <button
                        type="button"
                        disabled={nothingToClear(user)}
                        title={nothingToClear(user) ? 'No second factor to clear' : undefined}
                        onClick={() => ask(user, 'factors')}
                      >
                        Clear second factor…
                      </button>
                    </div>
                    {asking?.id === user.id && (
                      <Confirm
                        label={`Confirm: ${RISKY[asking.kind].action(user)}`}
                        question={RISKY[asking.kind].question(user, user.id === session.user?.id)}
                        action={RISKY[asking.kind].action(user)}
                        onConfirm={() => void confirmed(user, asking.kind)}
                        onCancel={() => setAsking(undefined)}
                      />
                    )}
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

/** What was refused and why: the server's 409 "last administrator" says only the rule's name. */
function refusal(user: Account, error: unknown): string {
  if (error instanceof ApiError && error.status === 409 && /last administrator/i.test(error.message)) {
    return `Refused: ${user.username} is the last enabled administrator; make another administrator first.`;
  }
  return messageOf(error);
}

function CreateUser({ onCreated }: { onCreated: (created: CreatedUser) => void }) {
  const [username, setUsername] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();

  async function submit(event: Event) {
    event.preventDefault();
    setErrors({});
    setError(undefined);
    try {
      const created = await api('POST /api/users', { body: { username, display_name: displayName, role } });
      setUsername('');
      setDisplayName('');
      onCreated(created);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) setErrors({ username: 'is already taken' });
      else if (e instanceof ApiError && Object.keys(e.fields).length) setErrors(e.fields);
      else setError(messageOf(e));
    }
  }

  return (
    <form class="card form" onSubmit={submit} noValidate>
      <h2>Add a user</h2>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="form-grid">
        <Field id="new-username" label="Username" error={errors.username}>
          <input id="new-username" autocomplete="off" value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </Field>
        <Field id="new-display-name" label="Display name" error={errors.display_name}>
          <input id="new-display-name" autocomplete="off" value={displayName} onInput={(e) => setDisplayName(e.currentTarget.value)} />
        </Field>
        <Field id="new-role" label="Role" error={errors.role}>
          <select id="new-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {ROLES.map((r) => (
              <option value={r}>{r}</option>
            ))}
          </select>
        </Field>
      </div>
      <button type="submit" class="primary">
        Create user
      </button>
    </form>
  );
}
