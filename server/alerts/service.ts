import { nameOf, type AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import { ALERT_RULES, type Alert, type AlertRule, type AlertRuleName, type AlertStatus } from '../contract/alerts.js';
import { notFound, validationFailed } from '../errors.js';
import { createAlertRepo } from './repo.js';
import { RULES, THRESHOLDS, type AlertFacts, type RuleSettings } from './rules.js';
import type { AlertRuleUpdate } from '../contract/inputs/alerts.js';

export type AlertChange = 'alert.firing' | 'alert.resolved';

export interface AlertsOptions {
  /** Milliseconds between evaluations (default the heartbeat interval, at most 5 s). */
  evaluateMs?: number;
}

export interface AlertDeps {
  facts: AlertFacts;
  audit: AuditLog;
  /** Called inside the transaction that fires or resolves an alert: notifications queue their deliveries there, so none is lost. */
  onChange?: (alert: Alert, change: AlertChange) => void;
}

const isRule = (name: string): name is AlertRuleName => (ALERT_RULES as readonly string[]).includes(name);

/**
 * The facts of one evaluation, each list read at most once: five rules read the hosts and the rules
 * run one after another without a wait, so nothing they read changes in between.
 */
function onePass(facts: AlertFacts): AlertFacts {
  const once = <T>(read: () => T): (() => T) => {
    let value: { v: T } | undefined;
    return () => (value ??= { v: read() }).v;
  };
  const failures = new Map<number, ReturnType<AlertFacts['policyFailures']>>();
  const policyFailures = (now: number) => failures.get(now) ?? failures.set(now, facts.policyFailures(now)).get(now)!;
  return { ...facts, hosts: once(facts.hosts), guests: once(facts.guests), jobs: once(facts.jobs), policyFailures };
}

/**
 * The built-in alert rules and their alerts. Every few seconds each rule says which conditions hold
 * now; one that has held for the rule's for_s fires (once per rule and subject), and a firing one
 * whose condition no longer holds resolves. Conditions waiting out for_s are kept in the database,
 * so a restart does not start the 24 hours of agent.outdated again.
 */
export function createAlertService(ctx: AppContext, deps: AlertDeps, options: AlertsOptions = {}) {
  const repo = createAlertRepo(ctx.db);
  const { facts } = deps;
  let evaluations = 0;

  function settingsOf(rule: AlertRuleName, stored = repo.settings()): RuleSettings {
    return { ...RULES[rule].defaults(facts.heartbeatIntervalS), ...(stored.get(rule) as Partial<RuleSettings> | undefined) };
  }

  const present = (rule: AlertRuleName, s: RuleSettings): AlertRule => ({ rule, description: RULES[rule].description, ...s });

  const announce = (alert: Alert, change: AlertChange) => {
    ctx.bus.publish(change, alert);
    deps.onChange?.(alert, change);
  };

  /** One rule's conditions against its alerts, in one transaction. */
  const evaluateRule = ctx.transaction((rule: AlertRuleName, settings: RuleSettings, now: number, pass: AlertFacts) => {
    const holding = settings.enabled ? RULES[rule].evaluate(pass, settings, now) : [];
    const firing = repo.firing(rule);
    const waiting = repo.conditions(rule);
    const seen = new Set<string>();
    // Held subjects keep their alert as it is: one firing stays firing, none fires, none waits out for_s.
    const held = settings.enabled && RULES[rule].held ? RULES[rule].held(pass, now) : new Set<string>();
    const isHeld = (subjectId: string) => held.has(subjectId);
    for (const c of holding) {
      const key = repo.key(c.subject);
      if (seen.has(key) || isHeld(c.subject.id)) continue;
      seen.add(key);
      if (firing.has(key)) continue;
      const since = c.since ?? waiting.get(key)?.since ?? now;
      if (now - since >= settings.for_s * 1000) {
        announce(repo.fire(rule, settings.severity, c.subject, now, c.value, c.message), 'alert.firing');
        if (waiting.has(key)) repo.dropCondition(rule, c.subject.type, c.subject.id);
      } else if (!waiting.has(key)) {
        repo.addCondition(rule, c.subject, since);
      }
    }
    for (const [key, w] of waiting) if (!seen.has(key)) repo.dropCondition(rule, w.subject_type, w.subject_id);
    for (const [key, row] of firing) {
      if (seen.has(key) || isHeld(row.subject_id)) continue;
      const resolved = repo.resolve(row.id, now);
      if (resolved) announce(resolved, 'alert.resolved');
    }
  });

  const updateTx = ctx.transaction((rule: AlertRuleName, patch: AlertRuleUpdate): AlertRule => {
    const stored = repo.settings();
    const before = settingsOf(rule, stored);
    const after: RuleSettings = { ...before, ...patch };
    const changes = (Object.keys(patch) as (keyof RuleSettings)[])
      .filter((field) => before[field] !== after[field])
      .map((field) => ({ field, before: before[field] ?? null, after: after[field] ?? null }));
    // Only what differs from the defaults is kept: the dashboard sends every field back, and a
    // host.offline for_s saved as shown would stop following FLEET_HEARTBEAT_INTERVAL_S ("default 3 intervals").
    const defaults = RULES[rule].defaults(facts.heartbeatIntervalS) as unknown as Record<string, unknown>;
    const overrides = Object.entries({ ...(stored.get(rule) ?? {}), ...patch }).filter(([field, value]) => value !== defaults[field]);
    repo.putSettings(rule, Object.fromEntries(overrides));
    deps.audit.write({
      action: 'alert_rule.update',
      subject: { type: 'alert_rule', id: rule, name: rule },
      summary: `${nameOf()} changed alert rule ${rule}`,
      changes,
    });
    return present(rule, after);
  });

  function evaluate(now = ctx.clock.now()): void {
    const stored = repo.settings();
    const pass = onePass(facts);
    for (const rule of ALERT_RULES) {
      try {
        evaluateRule(rule, settingsOf(rule, stored), now, pass);
      } catch (err) {
        ctx.logger.error({ err: { message: (err as Error).message }, rule }, 'alert rule evaluation failed');
      }
    }
    // Resolved alerts beyond the newest 10,000 go, now and then.
    if (++evaluations % 720 === 1) repo.prune();
  }

  return {
    rules: (): AlertRule[] => {
      const stored = repo.settings();
      return ALERT_RULES.map((rule) => present(rule, settingsOf(rule, stored)));
    },

    updateRule(name: string, patch: AlertRuleUpdate): AlertRule {
      if (!isRule(name)) throw notFound('alert rule not found');
      const allowed = THRESHOLDS[name];
      for (const field of ['percent', 'days'] as const) {
        if (patch[field] !== undefined && allowed !== field) throw validationFailed([{ field, message: `${name} has no ${field} threshold` }]);
      }
      const result = updateTx(name, patch);
      evaluate();
      return result;
    },

    list: (status: AlertStatus | undefined, limit: number): Alert[] => repo.list(status, limit),
    firingCounts(): { rule: string; count: number }[] {
      const counts = new Map(repo.firingCounts().map((r) => [r.rule, r.count]));
      return ALERT_RULES.map((rule) => ({ rule, count: counts.get(rule) ?? 0 }));
    },

    evaluate,

    start(): void {
      const every = options.evaluateMs ?? Math.min(5_000, facts.heartbeatIntervalS * 1000);
      ctx.tasks.every('alerts.evaluate', every, async () => {
        await facts.ready();
        evaluate();
      });
    },
  };
}

export type AlertService = ReturnType<typeof createAlertService>;
