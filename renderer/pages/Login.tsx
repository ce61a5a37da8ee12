import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Field, Notice, PageTitle } from '../components/ui';
import { navigate } from '../router';
import type { SecondFactorKind, UserAnswer } from '../../server/contract/access';
import type { SignInMethods } from '../../server/contract/signin';
import { useSession } from '../session';
import { safeNext } from '../safeNext';

/** The fixed codes /api/auth/oidc/callback sends back (server/signin/oidc.ts), worded for people. */
const SSO_ERRORS: Record<string, string> = {
  state: 'The single sign-on did not start in this browser or took too long. Try again.',
  denied: 'The provider did not sign you in.',
  token: 'The provider’s answer failed the security checks. Ask an administrator to look at the server log.',
  role: 'Your account at the provider has no group that homefleet maps to a role.',
  disabled: 'This account is disabled.',
  last_admin: 'Your groups would remove the last administrator; ask another administrator.',
  provider: 'The sign-in provider could not be reached. Try again later.',
  origin: 'Open homefleet at its configured address to use single sign-on.',
  throttled: 'Too many attempts. Try again later.',
};

const tooMany = (e: ApiError) => `Too many attempts. Try again in ${e.retryAfter ? `${Math.ceil(e.retryAfter / 60)} minute(s)` : 'a few minutes'}.`;

export function LoginPage() {
  const session = useSession();
  const query = new URLSearchParams(location.search);
  const next = safeNext(query.get('next'));
  // POST /setup sends the new administrator here with `setup=done`.
  const justSetUp = query.get('setup') === 'done';
  // Set when the live stream said the session ended ("account disabled", "signed out", …).
  const ended = query.get('reason')?.slice(0, 200);
  const ssoError = query.get('sso_error');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>(ssoError ? (SSO_ERRORS[ssoError] ?? 'Single sign-on failed.') : undefined);
  const [busy, setBusy] = useState(false);
  const [setupOpen, setSetupOpen] = useState(false);
  const [methods, setMethods] = useState<SignInMethods>({ password: true, oidc: null, passkeys: false });
  /** The password was right and the account has a second factor: the steps that may finish the sign-in. */
  const [secondStep, setSecondStep] = useState<SecondFactorKind[]>();

  useEffect(() => {
    // The first-administrator page answers 404 once setup is closed; offer it only while it is open.
    fetch('/setup', { method: 'HEAD', credentials: 'same-origin' }).then(
      (res) => setSetupOpen(res.ok),
      () => setSetupOpen(false),
    );
    api('GET /api/auth/methods').then(setMethods, () => {});
  }, []);

  async function signedIn(user: UserAnswer['user']) {
    await session.refresh();
    navigate(user.must_change_password ? `/password?next=${encodeURIComponent(next)}` : next, { replace: true });
  }

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api('POST /api/auth/login', { body: { username, password } });
      if ('second_factor' in answer) {
        setPassword('');
        setSecondStep(answer.second_factors ?? [answer.second_factor]);
        setBusy(false);
        return;
      }
      await signedIn(answer.user);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setError('Wrong username or password.');
      else if (e instanceof ApiError && e.status === 429) setError(tooMany(e));
      else setError(messageOf(e));
      setBusy(false);
    }
  }

  async function withPasskey() {
    setBusy(true);
    setError(undefined);
    try {
      const { signInWithPasskey } = await import('./passkeyPrompts');
      await signedIn(await signInWithPasskey());
    } catch (e) {
      if (e instanceof ApiError && e.status === 429) setError(tooMany(e));
      else setError(e instanceof ApiError ? 'The passkey was not accepted.' : 'The passkey prompt was closed or failed. Try again.');
      setBusy(false);
    }
  }

  if (secondStep) return <SecondStep factors={secondStep} onDone={signedIn} onRestart={() => setSecondStep(undefined)} />;

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
        {methods.password && (
          <>
            <Field id="username" label="Username">
              <input id="username" name="username" autocomplete="username webauthn" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
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
          </>
        )}
        {methods.oidc && (
          <a class="button sso" href={`/api/auth/oidc/start?next=${encodeURIComponent(next)}`}>
            Sign in with {methods.oidc.name}
          </a>
        )}
        {methods.passkeys && (
          <button type="button" class="passkey" disabled={busy} onClick={() => void withPasskey()}>
            Use a passkey
          </button>
        )}
        {setupOpen && (
          <p class="hint">
            No account yet? <a href="/setup">Create the first administrator</a> with the setup token.
          </p>
        )}
      </form>
    </div>
  );
}

/** The second step of a password sign-in: the authenticator app's code, one recovery code, or one of the account's passkeys. */
function SecondStep({ factors, onDone, onRestart }: { factors: SecondFactorKind[]; onDone: (user: UserAnswer['user']) => Promise<void>; onRestart: () => void }) {
  const totp = factors.includes('totp');
  const [recovery, setRecovery] = useState(false);
  const [value, setValue] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { user } = await api('POST /api/auth/login/totp', { body: recovery ? { recovery_code: value } : { code: value } });
      await onDone(user);
    } catch (e) {
      if (e instanceof ApiError && e.status === 429) setError(tooMany(e));
      else if (e instanceof ApiError && e.status === 401 && /expired/.test(e.message)) setError('The sign-in took too long. Enter your password again.');
      else if (e instanceof ApiError && (e.status === 401 || e.status === 400)) setError(recovery ? 'That recovery code is not valid or was used.' : 'Wrong or already used code. Wait for the next one.');
      else setError(messageOf(e));
      setValue('');
      setBusy(false);
    }
  }

  async function withPasskey() {
    setBusy(true);
    setError(undefined);
    try {
      const { confirmWithPasskey } = await import('./passkeyPrompts');
      await onDone(await confirmWithPasskey());
    } catch (e) {
      if (e instanceof ApiError && e.status === 429) setError(tooMany(e));
      else if (e instanceof ApiError && e.status === 401 && /expired/.test(e.message)) setError('The sign-in took too long. Enter your password again.');
      else setError(e instanceof ApiError ? 'The passkey was not accepted.' : 'The passkey prompt was closed or failed. Try again.');
      setBusy(false);
    }
  }

  const passkeyButton = factors.includes('passkey') && (
    <button type="button" class={totp ? 'passkey' : 'primary'} disabled={busy} onClick={() => void withPasskey()}>
      Use your passkey
    </button>
  );

  if (!totp) {
    return (
      <div class="auth-page">
        <div class="card auth-card" aria-labelledby="login-title">
          <p class="brand">homefleet</p>
          <PageTitle title="Two-step sign-in" />
          {error && <Notice kind="error">{error}</Notice>}
          <p>Confirm it is you with one of your passkeys.</p>
          {passkeyButton}
          <p class="hint">
            <button type="button" class="link" onClick={onRestart}>
              Start over
            </button>
          </p>
        </div>
      </div>
    );
  }

  return (
    <div class="auth-page">
      <form class="card auth-card" onSubmit={submit} aria-labelledby="login-title">
        <p class="brand">homefleet</p>
        <PageTitle title="Two-step sign-in" />
        {error && <Notice kind="error">{error}</Notice>}
        {recovery ? (
          <Field id="recovery_code" label="Recovery code" hint="One of the codes you saved when you turned on two-step sign-in; each works once.">
            <input key="recovery" id="recovery_code" autocomplete="off" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          </Field>
        ) : (
          <Field id="totp_code" label="Code from your authenticator app">
            <input key="totp" id="totp_code" inputMode="numeric" autocomplete="one-time-code" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          </Field>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Continue'}
        </button>
        {passkeyButton}
        <p class="hint">
          <button type="button" class="link" onClick={() => (setRecovery(!recovery), setValue(''), setError(undefined))}>
            {recovery ? 'Use the authenticator app' : 'Use a recovery code'}
          </button>{' '}
          ·{' '}
          <button type="button" class="link" onClick={onRestart}>
            Start over
          </button>
        </p>
      </form>
    </div>
  );
}
