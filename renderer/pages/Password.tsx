import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Field, Notice, PageTitle } from '../components/ui';
import { navigate } from '../router';
import { useSession } from '../session';
import { safeNext } from '../safeNext';
import type { Passkey } from '../../server/contract/signin';

export function PasswordPage() {
  const session = useSession();
  const forced = session.user?.must_change_password === true;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const [done, setDone] = useState(false);
  /** Passkeys added since the password before this one was set: whoever held it could have added them. */
  const [added, setAdded] = useState<Passkey[]>([]);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setError(undefined);
    setErrors({});
    if (next !== confirm) {
      setErrors({ confirm_password: 'does not match the new password' });
      return;
    }
    setBusy(true);
    try {
      await api('POST /api/auth/password', { body: { current_password: current, new_password: next } });
      const marked = (await api('GET /api/auth/passkeys').catch(() => [] as Passkey[])).filter((k) => k.added_since_password_change);
      setAdded(marked);
      await session.refresh();
      setCurrent('');
      setNext('');
      setConfirm('');
      setDone(true);
      if (forced && marked.length === 0) navigate(safeNext(new URLSearchParams(location.search).get('next')), { replace: true });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setErrors({ current_password: 'is not your current password' });
      else if (e instanceof ApiError) {
        setErrors(e.fields);
        if (!Object.keys(e.fields).length) setError(e.message);
      } else setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card narrow" onSubmit={submit} noValidate>
      <PageTitle title="Change password" />
      {forced && <Notice kind="warning">Your password is temporary. Choose a new one to continue.</Notice>}
      {done && <Notice kind="success">Password changed. Other sessions were signed out.</Notice>}
      {done && added.length > 0 && (
        <Notice kind="warning">
          <span data-testid="passkeys-added-since">
            {added.length === 1 ? 'This passkey was' : 'These passkeys were'} added since your password last changed: {added.map((k) => `“${k.name}”`).join(', ')}.
          </span>{' '}
          A passkey signs in without the password: <a href="/account">remove any you do not know</a>.
        </Notice>
      )}
      {error && <Notice kind="error">{error}</Notice>}
      <Field id="current_password" label="Current password" error={errors.current_password}>
        <input id="current_password" type="password" autocomplete="current-password" value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />
      </Field>
      <Field id="new_password" label="New password" hint="8 to 128 characters." error={errors.new_password}>
        <input id="new_password" type="password" autocomplete="new-password" value={next} onInput={(e) => setNext(e.currentTarget.value)} />
      </Field>
      <Field id="confirm_password" label="Repeat the new password" error={errors.confirm_password}>
        <input id="confirm_password" type="password" autocomplete="new-password" value={confirm} onInput={(e) => setConfirm(e.currentTarget.value)} />
      </Field>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Saving…' : 'Change password'}
      </button>
    </form>
  );
}
