import type { HostSummary } from '../../../server/contract/hosts';

const STATUS_TEXT: Record<HostSummary['status'], string> = {
  online: 'online',
  offline: 'offline',
  deleting: 'deleting',
  deleted: 'deleted',
};

export function StatusDot({ status }: { status: HostSummary['status'] }) {
  return (
    <span class={`status status-${status}`} data-status={status}>
      <span class="dot" aria-hidden="true" />
      {STATUS_TEXT[status]}
    </span>
  );
}

export function Upgrade({ upgrade }: { upgrade: HostSummary['upgrade'] }) {
  if (!upgrade) return <span class="muted">—</span>;
  return (
    <span class={`upgrade upgrade-${upgrade.state}`} title={`from ${upgrade.from ?? '?'} to ${upgrade.version}`}>
      {upgrade.version}: {upgrade.state.replace('_', ' ')}
    </span>
  );
}

/** A host that still reports and can be acted on: not being removed, not removed. */
export const isLive = (host: Pick<HostSummary, 'status'>) => host.status === 'online' || host.status === 'offline';

/** Runs an action for a page section; `done` is said afterwards (see HostDetailPage). */
export type Act = (action: () => Promise<unknown>, done?: string) => Promise<void>;
