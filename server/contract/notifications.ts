import type { AlertRuleName, Severity } from './alerts.js';
import type { ChannelType } from './channel-types.js';
import type { QuietHours } from './inputs/notifications.js';

export { CHANNEL_TYPES, type ChannelType } from './channel-types.js';

/** Config fields that are write-only: read back as `**REDACTED**`, kept when that is sent back. */
export const CHANNEL_SECRET_FIELDS: Readonly<Record<ChannelType, readonly string[]>> = {
  webhook: ['secret'],
  ntfy: ['token'],
  gotify: ['token'],
  // The whole Discord webhook URL is its credential.
  discord: ['webhook_url'],
  email: ['password'],
};

/** A channel as the API shows it: secret config fields as `**REDACTED**`. */
export interface Channel {
  id: number;
  name: string;
  type: ChannelType;
  config: Record<string, unknown>;
  rules: 'all' | AlertRuleName[];
  min_severity: Severity;
  quiet_hours: QuietHours | null;
  created_at: string;
  updated_at: string;
}

export type DeliveryEvent = 'alert.firing' | 'alert.resolved' | 'test';
export type DeliveryStatus = 'pending' | 'sent' | 'failed' | 'suppressed';

/** GET /api/notifications/deliveries: one notification to one channel and what became of it. */
export interface Delivery {
  id: number;
  channel_id: number | null;
  channel_name: string;
  alert_id: number | null;
  event: DeliveryEvent;
  status: DeliveryStatus;
  /** Attempts made so far (at most 4: the first and 3 retries). */
  attempts: number;
  /** Why the last attempt failed, or why it was suppressed (quiet hours, muted host). Never a secret. */
  error: string | null;
  created_at: string;
  next_attempt_at: string | null;
  finished_at: string | null;
}

/** POST /api/notifications/channels/:id/test: the outcome of one attempt. */
export interface TestOutcome {
  ok: boolean;
  error: string | null;
  delivery_id: number;
}
