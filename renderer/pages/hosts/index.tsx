import { HostDetailPage as HostDetail } from './HostDetail';

export { HostsPage } from './HostList';

/** One page per host: following a link to another host (a conflict names it) starts afresh, not with this host's notices and confirmations. */
export function HostDetailPage({ id }: { id: string }) {
  return <HostDetail key={id} id={id} />;
}
