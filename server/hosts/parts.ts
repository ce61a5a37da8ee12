import type { AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import { notFound } from '../errors.js';
import type { InstanceService } from '../registry/service.js';
import type { HostView } from './present.js';
import type { HostRepo, HostRow } from './repo.js';

/** What every part of hosts works with, built once by createHostService. */
export interface HostParts {
  ctx: AppContext;
  repo: HostRepo;
  /** Written inside the transaction of the change an entry records. */
  audit: AuditLog;
  view: HostView;
  /** The registry: drift changes it through its own rules. */
  instances: InstanceService;
}

/** Who asked, for the columns that keep it (`created_by`, `requested_by`); the change log reads its context itself. */
export interface Who {
  actor: string | null;
}

export const hostSubject = (host: Pick<HostRow, 'id' | 'hostname'>) => ({ type: 'host', id: String(host.id), name: host.hostname });

export function requireHost(repo: HostRepo, id: number): HostRow {
  const host = repo.hostById(id);
  if (!host) throw notFound('host not found');
  return host;
}

/** host.status with the host as it is now; inside a transaction it is heard once that commits. */
export function announceStatus({ ctx, repo, view }: HostParts, hostId: number): void {
  const host = repo.hostById(hostId);
  if (host) ctx.bus.publish('host.status', view.eventOf(host));
}
