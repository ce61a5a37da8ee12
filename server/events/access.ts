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
