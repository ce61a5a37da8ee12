import { liveEvent } from './events.js';

export type HostStatus = 'online' | 'offline' | 'deleting' | 'deleted';

/** What the stream sends for host.heartbeat and host.status: cheap to build on every heartbeat. */
export interface HostEvent {
  id: number;
  hostname: string;
  status: HostStatus;
  last_heartbeat_at: string | null;
  agent_version: string;
}

export const hostEvents = {
  'host.status': liveEvent<HostEvent>('hosts.read'),
  'host.heartbeat': liveEvent<HostEvent>('hosts.read'),
};
