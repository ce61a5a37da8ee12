import type { Alert } from '../../contract/alerts.js';
import type { DeliveryEvent } from '../../contract/notifications.js';

/** What a channel sends: the event, the alert (absent for a test), and the words made from them (message.ts). */
export interface Notification {
  event: DeliveryEvent;
  alert: Alert | null;
  sentAt: string;
  title: string;
  message: string;
  /** 1 (min) to 5 (urgent), as ntfy counts; other channels map it. */
  priority: 1 | 2 | 3 | 4 | 5;
  tags: string[];
}

/**
 * A failed attempt, in words safe to store and show: each channel builds its own text from a status
 * or an error code, never from a message that could quote a URL, a header or a reply.
 */
export class DeliveryError extends Error {}

export interface SendOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/** One kind of channel: its config's shape is its schema (schema.ts); `send` throws DeliveryError. */
export type Sender<C> = (config: C, notification: Notification, options: SendOptions) => Promise<void>;
