import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../api';
import { navigate, useLocation } from '../router';
import { stopLive, useLiveState } from '../live';
import { useSession } from '../session';

interface NavItem {
  href: string;
  label: string;
  show: boolean;
}

export function Layout({ children }: { children: ComponentChildren }) {
  const session = useSession();
  const { path } = useLocation();
  const [version, setVersion] = useState<string>();
  const [error, setError] = useState<string>();
  // On a phone the header is one row: brand, live badge and a Menu button that opens the links below it.
  const [menuOpen, setMenuOpen] = useState(false);
  // On a wide window the account's links sit behind a button with the account's name, so that an
  // administrator's nine links and the account fit one header row at 1280 px.
  const [accountOpen, setAccountOpen] = useState(false);
  useEffect(() => {
    setMenuOpen(false);
    setAccountOpen(false);
  }, [path]);
  // Escape or a click outside closes it (registered once: closing what is closed changes nothing).
  useEffect(() => {
    const close = (event: Event) => {
      if (event instanceof KeyboardEvent ? event.key === 'Escape' : !(event.target as Element).closest?.('.account')) setAccountOpen(false);
    };
    document.addEventListener('click', close);
    document.addEventListener('keydown', close);
    return () => {
      document.removeEventListener('click', close);
      document.removeEventListener('keydown', close);
    };
  }, []);
  useEffect(() => {
    api('GET /api/health').then(
      (health) => setVersion(health.version),
      () => setVersion(undefined),
    );
  }, []);

  const items: NavItem[] = [
    { href: '/instances', label: 'Instances', show: session.can('fleet.read') },
    { href: '/collections', label: 'Collections', show: session.can('content.read') },
    { href: '/jobs', label: 'Jobs', show: session.can('fleet.read') },
    { href: '/hosts', label: 'Hosts', show: session.can('hosts.read') },
    { href: '/health', label: 'Health', show: session.can('fleet.read') },
    { href: '/alerts', label: 'Alerts', show: session.can('fleet.read') },
    { href: '/campaigns', label: 'Campaigns', show: session.can('fleet.read') },
    { href: '/usage', label: 'Usage', show: session.can('content.read') },
    { href: '/scripts', label: 'Scripts', show: session.can('content.read') },
    { href: '/telemetry', label: 'Telemetry', show: session.can('diagnostics.read') },
    { href: '/settings', label: 'Settings', show: session.can('hosts.read') },
    { href: '/users', label: 'Users', show: session.can('users.manage') },
    { href: '/audit', label: 'Audit', show: session.can('users.manage') },
  ];

  async function signOut() {
    stopLive(); // its revoked event would otherwise announce the sign-out the person just chose
    try {
      await api('POST /api/auth/logout');
      await session.refresh();
      navigate('/login');
    } catch (e) {
      setError(messageOf(e));
    }
  }

  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class={`top${menuOpen ? ' menu-open' : ''}`}>
        <a class="brand" href="/instances">
          homefleet
        </a>
        <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen((open) => !open)}>
          {menuOpen ? 'Close' : 'Menu'}
        </button>
        <nav aria-label="Main" id="main-nav">
          <ul>
            {items
              .filter((item) => item.show)
              .map((item) => (
                <li key={item.href}>
                  <a href={item.href} aria-current={path.startsWith(item.href) ? 'page' : undefined}>
                    {item.label}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        {session.user && (
          <div class={`account${accountOpen ? ' account-open' : ''}`}>
            <LiveIndicator />
            <button
              type="button"
              class="account-toggle"
              aria-expanded={accountOpen}
              aria-controls="account-links"
              title={`Signed in as ${session.user.username}`}
              onClick={() => setAccountOpen((open) => !open)}
            >
              <span class="username">{session.user.username}</span> <span class="role">{session.user.role}</span>
            </button>
            <div class="account-links" id="account-links">
              <span class="who" title={`Signed in as ${session.user.username}`}>
                {session.user.username} <span class="role">{session.user.role}</span>
              </span>
              <a href="/tokens" aria-current={path.startsWith('/tokens') ? 'page' : undefined}>
                API tokens
              </a>
              <a href="/password">Password</a>
              <a href="/account" aria-current={path.startsWith('/account') ? 'page' : undefined}>
                Sign-in security
              </a>
              <button type="button" class="link" onClick={signOut}>
                Sign out
              </button>
            </div>
          </div>
        )}
      </header>
      {error && (
        <div class="notice notice-error" role="alert">
          {error}
        </div>
      )}
      <main id="main">{children}</main>
      <footer class="foot">
        homefleet <span data-testid="version">{version ? `v${version}` : ''}</span>
      </footer>
    </div>
  );
}

/** "live" while the event stream is open, "reconnecting" while it is not. */
function LiveIndicator() {
  const state = useLiveState();
  if (state === 'off') return null;
  const live = state === 'live';
  return (
    <span class={`live ${live ? 'live-on' : 'live-off'}`} aria-live="polite" data-testid="live" title={live ? 'Changes appear as they happen' : 'Reconnecting to the server…'}>
      {live ? 'live' : state === 'connecting' ? 'connecting' : 'reconnecting'}
    </span>
  );
}
