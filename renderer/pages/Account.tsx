import { useState } from 'preact/hooks';
import { plural } from '../format';
import { api, ApiError, messageOf } from '../api';
import { Confirm, CopyButton, Field, Loading, Notice, PageTitle, Time, useLoad } from '../components/ui';
import { navigate } from '../router';
import { safeNext } from '../safeNext';
import { useSession } from '../session';
import type { Passkey, TotpSetup } from '../../server/contract/signin';

/** The own account's sign-in: two-step sign-in (TOTP) and passkeys. A lazy chunk: few visits need it. */
export function AccountPage() {
  const session = useSession();
  const state = useLoad(
    () => Promise.all([api('GET /api/auth/session'), api('GET /api/auth/methods')]),
    [],
  );
  const [required, methods] = state.data ? [state.data[0].second_factor_required, state.data[1]] : [false, undefined];

  /** A factor was added: FLEET_REQUIRE_2FA is satisfied, so go on to the page asked for. */
  async function added() {
    if (!required) return state.reload();
    await session.refresh();
    navigate(safeNext(new URLSearchParams(location.search).get('next')), { replace: true });
  }

  return (
    <section class="narrow">
      <PageTitle title="Sign-in security" />
      {state.loading && !state.data && <Loading />}
      {state.error && <Notice kind="error">{state.error}</Notice>}
      {required && (
        <Notice kind="warning">
          <span data-testid="second-factor-required">Set up a second factor to continue:</span> two-step sign-in with an authenticator app, or a passkey.
        </Notice>
      )}
      {state.data && <TotpCard onAdded={added} />}
      {methods && <PasskeysCard available={methods.passkeys} onAdded={added} />}
    </section>
  );
}

function TotpCard({ onAdded }: { onAdded: () => Promise<void> }) {
  const status = useLoad(() => api('GET /api/auth/totp'), []);
  const [setup, setSetup] = useState<TotpSetup>();
  const [codes, setCodes] = useState<string[]>();
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [turningOff, setTurningOff] = useState(false);
  const [error, setError] = useState<string>();

  async function run(action: () => Promise<void>) {
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError(e instanceof ApiError && e.fields.code ? 'That is not the current code. Check the phone’s clock and try the next one.' : messageOf(e));
    }
  }

  const start = () => run(async () => setSetup(await api('POST /api/auth/totp/setup')));
  const confirm = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      const { recovery_codes } = await api('POST /api/auth/totp/confirm', { body: { code } });
      setSetup(undefined);
      setCode('');
      setCodes(recovery_codes);
      status.reload();
    });
  };
  const turnOff = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      await api('DELETE /api/auth/totp', { body: { password } });
      setPassword('');
      setTurningOff(false);
      status.reload();
    });
  };

  return (
    <div class="card" data-testid="totp">
      <h2>Two-step sign-in</h2>
      {error && <Notice kind="error">{error}</Notice>}
      {codes && (
        <div class="secret-once" data-testid="recovery-codes">
          <Notice kind="success">Two-step sign-in is on. Save these recovery codes now: each signs in once without the app, and they are not shown again.</Notice>
          <pre class="codes">{codes.join('\n')}</pre>
          <CopyButton text={codes.join('\n')} label="Copy the codes" />{' '}
          <button type="button" class="primary" onClick={() => (setCodes(undefined), void onAdded())}>
            I saved them
          </button>
        </div>
      )}
      {!codes && status.data?.enabled && (
        <>
          <p>
            On: a password sign-in asks for the code from your authenticator app. {plural(status.data.recovery_codes_left, 'recovery code')} left.
          </p>
          {turningOff ? (
            <form onSubmit={turnOff}>
              <Field id="totp_off_password" label="Your password">
                <input id="totp_off_password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
              </Field>
              <button type="submit" class="danger">
                Turn off two-step sign-in
              </button>{' '}
              <button type="button" onClick={() => setTurningOff(false)}>
                Cancel
              </button>
            </form>
          ) : (
            <button type="button" onClick={() => setTurningOff(true)}>
              Turn off…
            </button>
          )}
        </>
      )}
      {!codes && status.data && !status.data.enabled && !setup && (
        <>
          <p>Off. With it on, a stolen password alone is not enough to sign in.</p>
          <button type="button" class="primary" onClick={() => void start()}>
            Set up two-step sign-in
          </button>
        </>
      )}
      {setup && (
        <form onSubmit={confirm}>
          <p>Scan this code with an authenticator app (Aegis, 2FAS, Google Authenticator, 1Password…), then enter the 6-digit code it shows.</p>
          <img class="qr" src={setup.qr_code} alt="QR code of the two-step sign-in secret" width={200} height={200} />
          <p class="hint">
            Cannot scan? Enter this key: <code data-testid="totp-secret">{setup.secret}</code>
          </p>
          <Field id="totp_confirm" label="Code from the app">
            <input id="totp_confirm" inputMode="numeric" autocomplete="one-time-code" required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
          </Field>
          <button type="submit" class="primary">
            Turn on
          </button>
        </form>
      )}
    </div>
  );
}

function PasskeysCard({ available, onAdded }: { available: boolean; onAdded: () => Promise<void> }) {
  const list = useLoad(() => api('GET /api/auth/passkeys'), []);
  const [name, setName] = useState('');
  const [proof, setProof] = useState('');
  const [renaming, setRenaming] = useState<{ id: number; name: string }>();
  const [removing, setRemoving] = useState<number>();
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();

  async function run(action: () => Promise<unknown>, done: string) {
    setMessage(undefined);
    try {
      await action();
      setMessage({ kind: 'success', text: done });
      list.reload();
      return true;
    } catch (e) {
      setMessage({ kind: 'error', text: e instanceof ApiError ? messageOf(e) : 'The passkey prompt was closed or failed. Try again.' });
      return false;
    }
  }

  async function add(event: Event) {
    event.preventDefault();
    // Six digits are a code from the authenticator app (a password has at least 8 characters); nothing at all is
    // for an account of the single sign-on provider that signed in a moment ago.
    const typed = proof.replace(/\s+/g, '');
    const given = /^\d{6}$/.test(typed) ? { code: typed } : proof === '' ? {} : { password: proof };
    const added = await run(async () => (await import('./passkeyPrompts')).registerPasskey(name.trim(), given), `Passkey “${name.trim()}” added.`);
    setProof('');
    if (added) {
      setName('');
      await onAdded();
    }
  }

  return (
    <div class="card" data-testid="passkeys">
      <h2>Passkeys</h2>
      <p class="hint">A passkey signs you in without a password (it counts as both factors).</p>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {list.data && list.data.length > 0 && (
        <ul class="passkey-list">
          {list.data.map((key) => (
            <li key={key.id}>
              {renaming?.id === key.id ? (
                <form
                  onSubmit={(e) => (e.preventDefault(), void run(() => api('PATCH /api/auth/passkeys/:id', { params: { id: key.id }, body: { name: renaming.name } }), 'Passkey renamed.').then(() => setRenaming(undefined)))}
                >
                  <input aria-label="New name" value={renaming.name} maxLength={60} onInput={(e) => setRenaming({ id: key.id, name: e.currentTarget.value })} />{' '}
                  <button type="submit">Save</button>{' '}
                  <button type="button" onClick={() => setRenaming(undefined)}>
                    Cancel
                  </button>
                </form>
              ) : (
                <>
                  <strong>{key.name}</strong> <span class="muted">added</span> <Time iso={key.created_at} exact={false} />, <span class="muted">last used</span>{' '}
                  <Time iso={key.last_used_at} exact={false} />{' '}
                  {key.added_since_password_change && (
                    <span class="badge" data-testid="added-since-password-change" title="Added after your password was last set: remove it if you do not know it.">
                      since your last password change
                    </span>
                  )}{' '}
                  <button type="button" onClick={() => setRenaming({ id: key.id, name: key.name })}>
                    Rename
                  </button>{' '}
                  <button type="button" onClick={() => setRemoving(key.id)}>
                    Remove…
                  </button>
                </>
              )}
              {removing === key.id && (
                <Confirm
                  label={`Confirm: remove passkey ${key.name}`}
                  question={`Remove the passkey “${key.name}”? It no longer signs you in.`}
                  action="Remove passkey"
                  onConfirm={() => void run(() => api('DELETE /api/auth/passkeys/:id', { params: { id: key.id } }), 'Passkey removed.').then(() => setRemoving(undefined))}
                  onCancel={() => setRemoving(undefined)}
                />
              )}
            </li>
          ))}
        </ul>
      )}
      {list.data?.length === 0 && <p class="muted">No passkeys yet.</p>}
      {available ? (
        <form onSubmit={add}>
          <Field id="passkey_name" label="Name of the new passkey" hint="Where it lives, e.g. “Laptop” or “Phone”.">
            <input id="passkey_name" required maxLength={60} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field id="passkey_proof" label="Your password" hint="Or a 6-digit code from your authenticator app: a passkey signs in as you, so homefleet asks first.">
            <input id="passkey_proof" type="password" autocomplete="current-password" value={proof} onInput={(e) => setProof(e.currentTarget.value)} />
          </Field>
          <button type="submit" class="primary">
            Add a passkey
          </button>
        </form>
      ) : (
        <p class="hint">Passkeys need homefleet opened at a host name: its configured address, or http://localhost in development.</p>
      )}
    </div>
  );
}
