import { alertEvents } from './alerts.js';
import { auditEvents } from './audit.js';
import { campaignEvents } from './campaigns.js';
import type { LiveEventSpec } from './events.js';
import { hostEvents } from './hosts.js';
import { jobEvents } from './jobs.js';
import { operationEvents } from './operations.js';
import { metricsEvents } from './metrics.js';
import { registryEvents } from './registry.js';
import { usageEvents } from './usage.js';

/** Every live event the stream carries: each feature's own declarations, gathered. */
export const LIVE_EVENTS = {
  ...registryEvents,
  ...jobEvents,
  ...hostEvents,
  ...operationEvents,
  ...usageEvents,
  ...auditEvents,
  ...metricsEvents,
  ...alertEvents,
  ...campaignEvents,
};

export type LiveEventType = keyof typeof LIVE_EVENTS;
export const LIVE_EVENT_TYPES = Object.keys(LIVE_EVENTS) as LiveEventType[];

type PayloadOf<S> = S extends LiveEventSpec<infer P, unknown> ? P : never;
type SummaryOf<S> = S extends LiveEventSpec<infer P, infer Q> ? (Q extends P ? never : Q) : never;

/** The payload a feature publishes for each event. */
export type LiveEventMap = { [K in LiveEventType]: PayloadOf<(typeof LIVE_EVENTS)[K]> };
/** What a browser may receive for each event: the payload, or for some roles its summary. */
export type LiveEventData = { [K in LiveEventType]: PayloadOf<(typeof LIVE_EVENTS)[K]> | SummaryOf<(typeof LIVE_EVENTS)[K]> };
