import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError, signInUrl } from './api';
import { Layout } from './components/Layout';
import { Lazy } from './components/Lazy';
import { startLive, stopLive } from './live';
import { Empty, Loading, Notice, PageTitle } from './components/ui';
import { InstancesPage } from './pages/Instances';
import { LoginPage } from './pages/Login';
import { PasswordPage } from './pages/Password';
import { currentUrl, match, navigate, useLocation } from './router';
import { SessionContext, sessionFor, type Account, type Capability, type Session } from './session';

type Auth = { status: 'loading' } | { status: 'signed-out' } | { status: 'signed-in'; user: Account; secondFactorRequired: boolean } | { status: 'error'; message: string };

export function App() {
  const { path } = useLocation();
  const [auth, setAuth] = useState<Auth>({ status: 'loading' });

  const refresh = useCallback(async () => {
    try {
      const { user, second_factor_required } = await api('GET /api/auth/session');
      setAuth({ status: 'signed-in', user, secondFactorRequired: second_factor_required });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setAuth({ status: 'signed-out' });
      else setAuth({ status: 'error', message: e instanceof ApiError ? e.message : 'The server could not be reached.' });
    }
  }, []);
  useEffect(() => void refresh(), [refresh]);

  const user = auth.status === 'signed-in' ? auth.user : null;
  const needsFactor = auth.status === 'signed-in' && auth.secondFactorRequired;
  useEffect(() => {
    // The live location, not `path`: the sign-in page may already have moved on since this render.
    const here = location.pathname;
    if (auth.status === 'signed-out' && here !== '/login') navigate(signInUrl(), { replace: true });
    if (user?.must_change_password && here !== '/password') navigate(`/password?next=${encodeURIComponent(currentUrl())}`, { replace: true });
    else if (needsFactor && here !== '/account') navigate(`/account?next=${encodeURIComponent(currentUrl())}`, { replace: true });
    if (here === '/') navigate('/instances', { replace: true });
  }, [auth, path]);

  // One event stream for the whole app while signed in; a revoked session goes to sign-in with the reason.
  useEffect(() => {
    if (!user || user.must_change_password || needsFactor) return;
    const onRevoked = (reason: string) => {
      // Changing one's own password ends the old session but sets a new cookie: then just reconnect.
      api('GET /api/auth/session').then(
        () => startLive({ onRevoked }),
        () => {
          navigate(`/login?reason=${encodeURIComponent(reason)}&next=${encodeURIComponent(currentUrl())}`, { replace: true });
          setAuth({ status: 'signed-out' });
        },
      );
    };
    startLive({ onRevoked });
    return stopLive;
  }, [user?.id, user?.role, user?.must_change_password, needsFactor]);

  const session = sessionFor(user, refresh);
  if (auth.status === 'loading') return <Loading />;
  if (auth.status === 'error') return <Notice kind="error">{auth.message}</Notice>;
  return (
    <SessionContext.Provider value={session}>
      {path === '/login' || auth.status === 'signed-out' ? <LoginPage /> : <Layout>{route(path, session)}</Layout>}
    </SessionContext.Provider>
  );
}

/**
 * Every page but the instances list, sign-in and the password change is a chunk of its own, fetched
 * when it first opens: the first load carries only what the first page needs. Each lazy page has its
 * own key (see Lazy), a detail page one per id: another host's page starts afresh, charts included.
 */
const pages = {
  instanceForm: () => import('./pages/InstanceForm').then((m) => m.InstanceFormPage),
  instanceDetail: () => import('./pages/InstanceDetail').then((m) => m.InstanceDetailPage),
  collections: () => import('./pages/Collections').then((m) => m.CollectionsPage),
  collection: () => import('./pages/Collections').then((m) => m.CollectionPage),
  jobs: () => import('./pages/Jobs').then((m) => m.JobsPage),
  jobDetail: () => import('./pages/JobDetail').then((m) => m.JobDetailPage),
  hosts: () => import('./pages/hosts').then((m) => m.HostsPage),
  hostDetail: () => import('./pages/hosts').then((m) => m.HostDetailPage),
  alerts: () => import('./pages/Alerts').then((m) => m.AlertsPage),
  campaigns: () => import('./pages/campaigns').then((m) => m.CampaignsPage),
  campaign: () => import('./pages/campaigns').then((m) => m.CampaignPage),
  health: () => import('./pages/FleetHealth').then((m) => m.FleetHealthPage),
  usage: () => import('./pages/Usage').then((m) => m.UsagePage),
  settings: () => import('./pages/Settings').then((m) => m.SettingsPage),
  users: () => import('./pages/Users').then((m) => m.UsersPage),
  audit: () => import('./pages/Logs').then((m) => m.AuditPage),
  telemetry: () => import('./pages/Logs').then((m) => m.TelemetryPage),
  tokens: () => import('./pages/Tokens').then((m) => m.TokensPage),
  scripts: () => import('./pages/Scripts').then((m) => m.ScriptsPage),
  scriptEditor: () => import('./pages/Scripts').then((m) => m.ScriptEditorPage),
  account: () => import('./pages/Account').then((m) => m.AccountPage),
};

function route(path: string, session: Session) {
  const need = (capability: Capability, page: ComponentChildren) => (session.can(capability) ? page : <NotAllowed />);
  let params: Record<string, string> | null;
  if (path === '/' || match('/instances', path)) return need('fleet.read', <InstancesPage />);
  if (match('/instances/new', path)) return need('fleet.operate', <Lazy key="instance-new" load={pages.instanceForm} />);
  if ((params = match('/instances/:vmid/edit', path))) return need('fleet.operate', <Lazy key={`instance-edit-${params.vmid}`} load={pages.instanceForm} props={{ vmid: params.vmid! }} />);
  if ((params = match('/instances/:vmid', path))) return need('fleet.read', <Lazy key={`instance-${params.vmid}`} load={pages.instanceDetail} props={{ vmid: params.vmid! }} />);
  if (match('/collections', path)) return need('content.read', <Lazy key="collections" load={pages.collections} />);
  if ((params = match('/collections/:id', path))) return need('content.read', <Lazy key={`collection-${params.id}`} load={pages.collection} props={{ id: params.id! }} />);
  if (match('/jobs', path)) return need('fleet.read', <Lazy key="jobs" load={pages.jobs} />);
  if ((params = match('/jobs/:id', path))) return need('fleet.read', <Lazy key={`job-${params.id}`} load={pages.jobDetail} props={{ id: params.id! }} />);
  if (match('/hosts', path)) return need('hosts.read', <Lazy key="hosts" load={pages.hosts} />);
  if ((params = match('/hosts/:id', path))) return need('hosts.read', <Lazy key={`host-${params.id}`} load={pages.hostDetail} props={{ id: params.id! }} />);
  if (match('/alerts', path)) return need('fleet.read', <Lazy key="alerts" load={pages.alerts} />);
  if (match('/campaigns', path)) return need('fleet.read', <Lazy key="campaigns" load={pages.campaigns} />);
  if ((params = match('/campaigns/:id', path))) return need('fleet.read', <Lazy key={`campaign-${params.id}`} load={pages.campaign} props={{ id: params.id! }} />);
  if (match('/health', path)) return need('fleet.read', <Lazy key="health" load={pages.health} />);
  if (match('/usage', path)) return need('content.read', <Lazy key="usage" load={pages.usage} />);
  if (match('/scripts', path)) return need('content.read', <Lazy key="scripts" load={pages.scripts} />);
  if (match('/scripts/new', path)) return need('content.manage', <Lazy key="script-new" load={pages.scriptEditor} />);
  if ((params = match('/scripts/:id', path))) return need('content.manage', <Lazy key={`script-${params.id}`} load={pages.scriptEditor} props={{ id: params.id! }} />);
  // Settings → Files is its widest section (hosts.read, every role); the others check their own capability.
  if (match('/settings', path)) return need('hosts.read', <Lazy key="settings" load={pages.settings} />);
  if (match('/users', path)) return need('users.manage', <Lazy key="users" load={pages.users} />);
  if (match('/audit', path)) return need('users.manage', <Lazy key="audit" load={pages.audit} />);
  if (match('/telemetry', path)) return need('diagnostics.read', <Lazy key="telemetry" load={pages.telemetry} />);
  if (match('/tokens', path)) return need('self', <Lazy key="tokens" load={pages.tokens} />);
  if (match('/password', path)) return <PasswordPage />;
  if (match('/account', path)) return <Lazy key="account" load={pages.account} />;
  return (
    <>
      <PageTitle title="Page not found" />
      <Empty title="There is no page here.">
        Go to the <a href="/instances">instances</a>.
      </Empty>
    </>
  );
}

function NotAllowed() {
  return (
    <>
      <PageTitle title="Not available" />
      <Empty title="Your role cannot use this page.">Ask an administrator if you need it.</Empty>
    </>
  );
}
