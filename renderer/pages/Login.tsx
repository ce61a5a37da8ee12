import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Field, Notice, PageTitle } from '../components/ui';
import { navigate } from '../router';
import type { UserAnswer } from '../../server/contract/access';
import { useSession } from '../session';
import { safeNext } from '../safeNext';

export function LoginPage() {
  const session = useSession();
  const query = new URLSearchParams(location.search);
  const next = safeNext(query.get('next'));
  // POST /setup sends the new administrator here with `setup=done`.
  const justSetUp = query.get('setup') === 'done';
  // Set when the live stream said the session ended ("account disabled", "signed out", …).
  const ended = query.get('reason')?.slice(0, 200);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [setupOpen, setSetupOpen] = useState(false);

  useEffect(() => {
    // The first-administrator page answers 404 once setup is closed; offer it only while it is open.
    fetch('/setup', { method: 'HEAD', credentials: 'same-origin' }).then(
      (res) => setSetupOpen(res.ok),
      () => setSetupOpen(false),
    );
  }, []);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { user } = await api<UserAnswer>('POST', '/api/auth/login', { username, password });
      await session.refresh();
      navigate(user.must_change_password ? `/password?next=${encodeURIComponent(next)}` : next, { replace: true });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setError('Wrong username or password.');
      else if (e instanceof ApiError && e.status === 429)
        setError(`Too many attempts. Try again in ${e.retryAfter ? `${Math.ceil(e.retryAfter / 60)} minute(s)` : 'a few minutes'}.`);
      else setError(messageOf(e));
      setBusy(false);
    }
  }

  return (
    <div class="auth-page">
      <form class="card auth-card" onSubmit={submit} aria-labelledby="login-title">
        <p class="brand">homefleet</p>
        <PageTitle title="Sign in" />
        {justSetUp && !error && <Notice kind="success">Administrator created, sign in.</Notice>}
        {error && <Notice kind="error">{error}</Notice>}
        {ended && !error && (
          <Notice kind="warning">
            <span data-testid="signed-out-reason">You were signed out: {ended}.</span> Sign in again to continue.
          </Notice>
        )}
        <Field id="username" label="Username">
          <input id="username" name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </Field>
        <Field id="password" label="Password">
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {setupOpen && (
          <p class="hint">
            No account yet? <a href="/setup">Create the first administrator</a> with the setup token.
          </p>
        )}
      </form>
    </div>
  );
}
