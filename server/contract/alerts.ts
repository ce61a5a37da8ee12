import { liveEvent } from './events.js';

export const ALERT_RULES = [
  'host.offline',
  'guest.down',
  'host.disk',
  'host.memory',
  'host.cpu',
  'agent.outdated',
  'job.failed',
  'snapshot.failed',
  'tls.expiry',
  'policy.failed',
  'backup.failed',
] as const;
export type AlertRuleName = (typeof ALERT_RULES)[number];

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** GET /api/alerts/rules: a built-in rule with its settings (defaults until an administrator changes them). */
export interface AlertRule {
  rule: AlertRuleName;
  /** What the rule watches, in words. */
  description: string;
  enabled: boolean;
  severity: Severity;
  /** How long the condition must hold before the alert fires. */
  for_s: number;
  /** host.disk, host.memory, host.cpu: the usage that counts. */
  percent?: number;
  /** tls.expiry: the certificate expires within this many days. */
  days?: number;
}

export interface AlertSubject {
  /** host, guest, job, snapshot, certificate, instance, backup */
  type: string;
  id: string;
  name: string;
}

export type AlertStatus = 'firing' | 'resolved';

/** GET /api/alerts */
export interface Alert {
  id: number;
  rule: AlertRuleName;
  severity: Severity;
  subject: AlertSubject;
  status: AlertStatus;
  started_at: string;
  resolved_at: string | null;
  /** The measured value when it fired (a percentage, seconds without a heartbeat, days left), or null. */
  value: number | null;
  message: string;
}

export const alertEvents = {
  'alert.firing': liveEvent<Alert>('fleet.read'),
  'alert.resolved': liveEvent<Alert>('fleet.read'),
};
