import type { Role } from '../access/capabilities.js';
import { roleHas } from '../access/capabilities.js';
import type { Capability } from '../http/routes.js';

/** Every event the stream carries, and the capability a role needs to receive it: the one table. */
export const EVENT_ACCESS = {
  'instance.created': 'fleet.read',
  'instance.updated': 'fleet.read',
  'instance.deleted': 'fleet.read',
  'job.run.started': 'fleet.read',
  'job.run.finished': 'fleet.read',
  'host.status': 'hosts.read',
  'host.heartbeat': 'hosts.read',
  'usage.report': 'content.read',
  // "audit.entry (the last only to administrators)": users.manage is the administrators' capability.
  'audit.entry': 'users.manage',
} as const satisfies Record<string, Capability>;

export type LiveEventType = keyof typeof EVENT_ACCESS;
export const LIVE_EVENT_TYPES = Object.keys(EVENT_ACCESS) as LiveEventType[];

export const roleMaySee = (role: Role, type: LiveEventType): boolean => roleHas(role, EVENT_ACCESS[type]);

/**
 * Events whose full data needs more than the capability above: roles without `capability` get
 * `summarize(data)` instead. Viewers may read usage *summaries* (content.read), not the reports
 * themselves (content.manage), so their usage.report carries only what the charts count.
 */
export const EVENT_DETAIL: Partial<Record<LiveEventType, { capability: Capability; summarize: (data: any) => unknown }>> = {
  'usage.report': {
    capability: 'content.manage',
    summarize: (report: { id: number; nsapp: string; status: string; type: string; created_at: string; updated_at: string }) => ({
      id: report.id,
      nsapp: report.nsapp,
      status: report.status,
      type: report.type,
      created_at: report.created_at,
      updated_at: report.updated_at,
    }),
  },
};
