import { useEffect, useState } from 'preact/hooks';

/** A small router of our own: the History API, one listener list, and links that stay in the app. */
type Listener = () => void;
const listeners = new Set<Listener>();

export function currentUrl(): string {
  return location.pathname + location.search;
}

export function navigate(url: string, options: { replace?: boolean } = {}): void {
  if (url === currentUrl()) return;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

/** The current path and query; components re-render when either changes. */
export function useLocation(): { path: string; search: string } {
  const [, setUrl] = useState(currentUrl());
  useEffect(() => {
    const listener = () => setUrl(currentUrl());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, []);
  return { path: location.pathname, search: location.search };
}

/** Matches `/instances/:vmid` style patterns; returns the parameters or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.replace(/\/+$/, '').split('/');
  if (path === '/') got.splice(1, 1, '');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const part = want[i]!;
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(got[i]!);
    else if (part !== got[i]) return null;
  }
  return params;
}

/** Clicks on in-app links navigate without a reload; modified clicks keep the browser's behaviour. */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element | null)?.closest?.('a');
  if (!anchor || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  if (anchor.target || anchor.hasAttribute('download') || anchor.origin !== location.origin) return;
  if (anchor.pathname.startsWith('/api/') || anchor.pathname === '/setup' || anchor.dataset.external !== undefined) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
