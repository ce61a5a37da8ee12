import type { AlertRuleName, AlertSubject, Severity } from '../contract/alerts.js';

/** Some of a host's guests, and how many it has. */
export interface GuestSample {
  first: { vmid: number; name: string }[];
  total: number;
}

/** The guests an offline host's alert names; the rest are counted. */
const NAMED_GUESTS = 20;

/** A rule's settings as stored: defaults overlaid with what an administrator changed. */
export interface RuleSettings {
  enabled: boolean;
  severity: Severity;
  for_s: number;
  percent?: number;
  days?: number;
}

/** What the rules read of the fleet, handed in by the composition root (server/services.ts). Times in ms. */
export interface AlertFacts {
  heartbeatIntervalS: number;
  /** Hosts that are enrolled and not being removed. */
  hosts(): { id: number; hostname: string; online: boolean; last_heartbeat_at: number | null; upgrade_available: boolean; agent_version: string }[];
  /** The guests (templates left out) a host's last heartbeat listed, the first `limit` by vmid and how many in all: what its going offline affects. */
  hostGuests(hostId: number, limit: number): GuestSample;
  /** Guests not running, as their host's last heartbeat listed them, with the state of their registry instance (null: none). */
  guests(): { host_id: number; hostname: string; vmid: number; name: string; status: string; instance_state: string | null }[];
  /** The host's last reported numbers and when they came. */
  hostMetrics(hostId: number): { at: number; cpu?: number; mem_used?: number; mem_total?: number; disk_used?: number; disk_total?: number } | undefined;
  jobs(): { key: string; name: string; last_status: string | null; last_run_at: number | null; result: string }[];
  /** The last database snapshot that failed, while no later one succeeded. */
  snapshotFailure(): { at: number; message: string } | null;
  /** The certificate the server speaks HTTPS with, when it does. */
  certificate(): { notAfter: number } | null;
  /** Resolves once every fact is at hand without one long read (the fleet's registry, read again after an import). */
  ready(): Promise<void>;
  /** Instances failing a fleet-health check now (message: the reasons), and the vmids whose host is offline. */
  policyFailures(now: number): { failing: { vmid: number; name: string; message: string }[]; held: ReadonlySet<number> };
  /** Backup volumes whose verification failed. */
  failedBackups(): { vmid: number; volid: string; ctime: number }[];
}

/** A condition that holds now: for whom, the measured value, the words, and (when the rule knows) since when. */
export interface Condition {
  subject: AlertSubject;
  value: number | null;
  message: string;
  since?: number;
}

interface RuleDefinition {
  description: string;
  defaults(intervalS: number): RuleSettings;
  evaluate(facts: AlertFacts, settings: RuleSettings, now: number): Condition[];
  /**
   * "Alerts follow dependencies": the subject ids whose alert neither fires nor resolves now (the
   * guests of an offline host: the host.offline alert speaks for them, and what they were is unknown).
   */
  held?(facts: AlertFacts, now: number): ReadonlySet<string>;
}

const hostSubject = (h: { id: number; hostname: string }): AlertSubject => ({ type: 'host', id: String(h.id), name: h.hostname });

/** How many guests an offline host takes with it, and which (the first 20 by vmid). */
function affected({ first, total }: GuestSample): string {
  if (total === 0) return 'it lists no guests';
  const named = first.slice(0, NAMED_GUESTS).map((g) => (g.name ? `${g.vmid} “${g.name}”` : String(g.vmid)));
  const more = total > named.length ? ` and ${total - named.length} more` : '';
  return `it affects ${total} guest${total === 1 ? '' : 's'}: ${named.join(', ')}${more}`;
}
const percent = (used: number, total: number) => Math.round((used / total) * 1000) / 10;

/** A host's metric as a percentage, where it is fresh (reported within 3 heartbeat intervals). */
function usage(facts: AlertFacts, now: number, settings: RuleSettings, what: string, pick: (m: NonNullable<ReturnType<AlertFacts['hostMetrics']>>) => number | undefined): Condition[] {
  const out: Condition[] = [];
  for (const host of facts.hosts()) {
    const m = facts.hostMetrics(host.id);
    if (!m || now - m.at > 3 * facts.heartbeatIntervalS * 1000) continue;
    const value = pick(m);
    if (value === undefined || value < settings.percent!) continue;
    out.push({ subject: hostSubject(host), value, message: `${what} of ${host.hostname} is at ${value}% (at or above ${settings.percent}%)` });
  }
  return out;
}

/** The built-in rules (PRODUCT.md), one entry each: what it watches, its defaults, and when it holds. */
export const RULES: Readonly<Record<AlertRuleName, RuleDefinition>> = {
  'host.offline': {
    description: 'A host sent no heartbeat for for_s (default 3 heartbeat intervals).',
    defaults: (intervalS) => ({ enabled: true, severity: 'critical', for_s: 3 * intervalS }),
    evaluate: (facts, _s, now) =>
      facts
        .hosts()
        // Silent for more than an interval: the condition began at the last heartbeat.
        .filter((h) => h.last_heartbeat_at !== null && now - h.last_heartbeat_at > facts.heartbeatIntervalS * 1000)
        .map((h) => {
          const seconds = Math.round((now - h.last_heartbeat_at!) / 1000);
          const guests = affected(facts.hostGuests(h.id, NAMED_GUESTS));
          return { subject: hostSubject(h), value: seconds, since: h.last_heartbeat_at!, message: `${h.hostname} has sent no heartbeat for ${seconds} s; ${guests}` };
        }),
  },
  'guest.down': {
    description: 'A guest whose registry instance is deployed is not running.',
    defaults: () => ({ enabled: true, severity: 'warning', for_s: 120 }),
    evaluate: (facts) =>
      facts
        .guests()
        .filter((g) => g.instance_state === 'deployed' && g.status !== 'running')
        .map((g) => ({
          subject: { type: 'guest', id: `${g.host_id}/${g.vmid}`, name: g.name || String(g.vmid) },
          value: null,
          message: `guest ${g.vmid} “${g.name}” on ${g.hostname} is ${g.status || 'not running'}; its instance is deployed`,
        })),
    held: (facts) => {
      const offline = new Set(facts.hosts().filter((h) => !h.online).map((h) => h.id));
      return new Set(facts.guests().filter((g) => offline.has(g.host_id)).map((g) => `${g.host_id}/${g.vmid}`));
    },
  },
  'host.disk': {
    description: 'The root filesystem of a host is at least percent full.',
    defaults: () => ({ enabled: true, severity: 'warning', for_s: 300, percent: 90 }),
    evaluate: (facts, s, now) => usage(facts, now, s, 'the root filesystem', (m) => (m.disk_used !== undefined && m.disk_total ? percent(m.disk_used, m.disk_total) : undefined)),
  },
  'host.memory': {
    description: 'A host uses at least percent of its memory.',
    defaults: () => ({ enabled: true, severity: 'warning', for_s: 300, percent: 95 }),
    evaluate: (facts, s, now) => usage(facts, now, s, 'memory use', (m) => (m.mem_used !== undefined && m.mem_total ? percent(m.mem_used, m.mem_total) : undefined)),
  },
  'host.cpu': {
    description: 'A host uses at least percent of its CPU.',
    defaults: () => ({ enabled: true, severity: 'warning', for_s: 600, percent: 95 }),
    evaluate: (facts, s, now) => usage(facts, now, s, 'CPU use', (m) => (m.cpu !== undefined ? Math.round(m.cpu * 1000) / 10 : undefined)),
  },
  'agent.outdated': {
    description: 'A host runs an agent older than the one this server ships.',
    defaults: () => ({ enabled: true, severity: 'info', for_s: 86_400 }),
    evaluate: (facts) =>
      facts
        .hosts()
        .filter((h) => h.upgrade_available)
        .map((h) => ({ subject: hostSubject(h), value: null, message: `${h.hostname} runs agent ${h.agent_version}, older than the one this server ships` })),
  },
  'job.failed': {
    description: 'The last run of a sync job ended in error.',
    defaults: () => ({ enabled: true, severity: 'warning', for_s: 0 }),
    evaluate: (facts) =>
      facts
        .jobs()
        .filter((j) => j.last_status === 'error')
        .map((j) => ({
          subject: { type: 'job', id: j.key, name: j.name },
          value: null,
          since: j.last_run_at ?? undefined,
          message: `the last run of ${j.key} failed: ${j.result.slice(0, 300) || 'no message'}`,
        })),
  },
  'snapshot.failed': {
    description: 'The last database snapshot failed.',
    defaults: () => ({ enabled: true, severity: 'warning', for_s: 0 }),
    evaluate: (facts) => {
      const failure = facts.snapshotFailure();
      return failure
        ? [{ subject: { type: 'snapshot', id: 'database', name: 'database snapshots' }, value: null, since: failure.at, message: `a database snapshot failed: ${failure.message.slice(0, 300)}` }]
        : [];
    },
  },
  'tls.expiry': {
    description: 'The certificate the server speaks HTTPS with expires within days.',
    defaults: () => ({ enabled: true, severity: 'warning', for_s: 0, days: 14 }),
    evaluate: (facts, s, now) => {
      const cert = facts.certificate();
      if (!cert) return [];
      const days = Math.floor((cert.notAfter - now) / 86_400_000);
      if (cert.notAfter - now > s.days! * 86_400_000) return [];
      const when = days < 0 ? `expired ${-days} days ago` : `expires in ${days} days`;
      return [{ subject: { type: 'certificate', id: 'server', name: 'HTTPS certificate' }, value: days, message: `the server's HTTPS certificate ${when} (${new Date(cert.notAfter).toISOString()})` }];
    },
  },
  'policy.failed': {
    description: 'An instance fails a check of its fleet-health policy for for_s.',
    defaults: () => ({ enabled: true, severity: 'warning', for_s: 3600 }),
    evaluate: (facts, _s, now) =>
      facts.policyFailures(now).failing.map((f) => ({ subject: { type: 'instance', id: String(f.vmid), name: f.name }, value: null, message: `${f.vmid} “${f.name}” fails its policy: ${f.message}` })),
    held: (facts, now) => new Set([...facts.policyFailures(now).held].map(String)),
  },
  'backup.failed': {
    description: 'A backup that an agent reported failed its verification.',
    defaults: () => ({ enabled: true, severity: 'warning', for_s: 0 }),
    evaluate: (facts) =>
      facts.failedBackups().map((b) => ({
        subject: { type: 'backup', id: b.volid, name: `backup of ${b.vmid}` },
        value: null,
        since: b.ctime * 1000,
        message: `the backup ${b.volid} of guest ${b.vmid} (made ${new Date(b.ctime * 1000).toISOString()}) failed verification`,
      })),
  },
};

/** Thresholds each rule has besides enabled, severity and for_s. */
export const THRESHOLDS: Readonly<Partial<Record<AlertRuleName, 'percent' | 'days'>>> = {
  'host.disk': 'percent',
  'host.memory': 'percent',
  'host.cpu': 'percent',
  'tls.expiry': 'days',
};
