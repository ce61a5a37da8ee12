import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../api';
import { navigate, useLocation } from '../router';
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
  useEffect(() => {
    api<{ version: string }>('GET', '/api/health').then(
      (health) => setVersion(health.version),
      () => setVersion(undefined),
    );
  }, []);

  const items: NavItem[] = [
    { href: '/instances', label: 'Instances', show: session.can('fleet.read') },
    { href: '/jobs', label: 'Jobs', show: session.can('fleet.read') },
    { href: '/hosts', label: 'Hosts', show: session.can('hosts.read') },
    { href: '/telemetry', label: 'Telemetry', show: session.can('diagnostics.read') },
    { href: '/settings', label: 'Settings', show: session.can('settings.manage') },
    { href: '/users', label: 'Users', show: session.can('users.manage') },
    { href: '/audit', label: 'Audit', show: session.can('users.manage') },
  ];

  async function signOut() {
    try {
      await api('POST', '/api/auth/logout');
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
      <header class="top">
        <a class="brand" href="/instances">
          homefleet
        </a>
        <nav aria-label="Main">
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
          <div class="account">
            <span class="who" title={`Signed in as ${session.user.username}`}>
              {session.user.username} <span class="role">{session.user.role}</span>
            </span>
            <a href="/password">Password</a>
            <button type="button" class="link" onClick={signOut}>
              Sign out
            </button>
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
