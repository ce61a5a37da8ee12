import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Loading, Notice } from './ui';

/**
 * A page whose code is a separate chunk, fetched the first time the page opens. Give each page its own
 * `key`: two lazy pages in a row are otherwise the same component to Preact, and the second would keep
 * showing the first.
 */
export function Lazy<P extends object>({ load, props }: { load: () => Promise<ComponentType<P>>; props?: P }) {
  const [page, setPage] = useState<{ Component?: ComponentType<P>; error?: boolean }>({});
  useEffect(() => {
    let live = true;
    load().then(
      (Component) => live && setPage({ Component }),
      () => live && setPage({ error: true }),
    );
    return () => {
      live = false;
    };
  }, []);
  if (page.error) return <Notice kind="error">This page could not be loaded. Reload to try again.</Notice>;
  if (!page.Component) return <Loading />;
  return <page.Component {...(props ?? ({} as P))} />;
}
