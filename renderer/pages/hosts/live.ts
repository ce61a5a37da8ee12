import { useCoalesced, useLive } from '../../live';
import type { HostEvent, HostSummary } from '../../../server/contract/hosts';

/** What a host event says, laid over a loaded host: status, last heartbeat, agent version. */
export const withEvent = <T extends HostSummary>(host: T, event: HostEvent): T => ({
  ...host,
  status: event.status,
  last_heartbeat_at: event.last_heartbeat_at,
  agent_version: event.agent_version,
});

/**
 * Live hosts (issue 12): a `host.heartbeat` or `host.status` event updates the status dot, last
 * heartbeat and agent version at once; guests and drift are not in the event, so the page re-reads
 * them (coalesced). Registry changes move drift too. `reset` (missed events) re-reads everything.
 */
export function useLiveHosts(
  concerns: (id: number) => boolean,
  update: (event: HostEvent) => boolean,
  reload: () => void,
  flash?: (key: number) => void,
): void {
  const reread = useCoalesced(reload);
  useLive(['host.heartbeat', 'host.status'], ({ data: event }) => {
    if (!concerns(event.id)) return;
    // An event for a host the page has not loaded (just enrolled) is a reason to re-read.
    if (update(event)) flash?.(event.id);
    reread();
  });
  useLive(['instance.created', 'instance.updated', 'instance.deleted', 'reset'], () => reread());
}
