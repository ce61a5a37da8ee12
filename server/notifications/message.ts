import type { Alert } from '../contract/alerts.js';
import type { DeliveryEvent } from '../contract/notifications.js';
import type { Notification } from './channels/types.js';

const PRIORITY = { info: 3, warning: 4, critical: 5 } as const;

/** The words and priority of a notification, the same for every channel. */
export function notificationOf(event: DeliveryEvent, alert: Alert | null, sentAt: string): Notification {
  if (event === 'test' || !alert) {
    return {
      event: 'test', alert: null, sentAt, priority: 3, tags: ['homefleet', 'test'],
      title: 'homefleet: test notification',
      message: 'This is a test from homefleet. Alerts will arrive on this channel like this one.',
    };
  }
  const firing = event === 'alert.firing';
  return {
    event,
    alert,
    sentAt,
    priority: firing ? PRIORITY[alert.severity] : 3,
    tags: ['homefleet', alert.rule, firing ? alert.severity : 'resolved'],
    title: `${firing ? alert.severity.toUpperCase() : 'RESOLVED'}: ${alert.rule} ${alert.subject.name}`,
    message: firing ? `${alert.message}\nSince ${alert.started_at}.` : `Resolved at ${alert.resolved_at ?? sentAt}: ${alert.message}`,
  };
}
