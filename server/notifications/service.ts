import type { AuditLog } from '../audit.js';
import { nameOf } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Alert } from '../contract/alerts.js';
import { SEVERITIES } from '../contract/alerts.js';
import type { Channel, Delivery, TestOutcome } from '../contract/notifications.js';
import { notFound, validationFailed } from '../errors.js';
import { parseWith } from '../http/validate.js';
import { isoMillis } from '../time.js';
import { createDeliveryQueue, type DeliveryOptions } from './queue.js';
import { inQuietHours } from './quiet-hours.js';
import { createNotificationRepo, type StoredChannel } from './repo.js';
import type { ChannelInput } from '../contract/inputs/notifications.js';
import { CHANNEL_CONFIGS } from './schema.js';
import { configChanges, keepSecrets, redact, requireSecretsRetyped } from './secrets.js';

export interface NotificationDeps {
  audit: AuditLog;
  /**
   * Whether a host's alerts are kept from notifying (PRODUCT.md: the maintenance policy's `muted`).
   * The composition root hands it in; the guest-control feature owns the setting.
   */
  isMuted: (hostId: number) => boolean;
}

/** The host an alert is about, when it is about one (a host, or a guest as "host/vmid"). */
function hostOf(alert: Alert): number | undefined {
  if (alert.subject.type !== 'host' && alert.subject.type !== 'guest') return undefined;
  const id = Number(alert.subject.id.split('/')[0]);
  return Number.isSafeInteger(id) ? id : undefined;
}

const present = (c: StoredChannel): Channel => ({
  id: c.id,
  name: c.name,
  type: c.type,
  config: redact(c.type, c.config),
  rules: c.rules,
  min_severity: c.min_severity,
  quiet_hours: c.quiet_hours,
  created_at: isoMillis(c.created_at),
  updated_at: isoMillis(c.updated_at),
});

/**
 * Notification channels and what is sent through them. An alert that fires or resolves queues one
 * delivery per channel that wants it, inside the alert's own transaction (none is lost); the queue
 * sends them with retries. Secrets stay in the database: no answer, log line, audit entry or error
 * text carries one.
 */
export function createNotificationService(ctx: AppContext, deps: NotificationDeps, options: DeliveryOptions = {}) {
  const repo = createNotificationRepo(ctx.db);
  const queue = createDeliveryQueue(ctx, repo, options);
  let pruneCount = 0;

  /** The input with stored secrets put back and its config held to the type's schema. */
  function resolve(input: ChannelInput, stored: StoredChannel | undefined): Omit<StoredChannel, 'id' | 'created_at' | 'updated_at'> {
    const kept = keepSecrets(input.type, input.config, stored);
    if (kept.missing) throw validationFailed([{ field: `config.${kept.missing}`, message: 'has no stored value to keep; send the secret itself' }]);
    let config: Record<string, unknown>;
    try {
      config = parseWith(CHANNEL_CONFIGS[input.type] as never, kept.config) as Record<string, unknown>;
    } catch (err) {
      const body = (err as { body?: { errors?: { field: string; message: string }[] } }).body;
      if (body?.errors) throw validationFailed(body.errors.map((e) => ({ field: `config.${e.field}`, message: e.message })));
      throw err;
    }
    // Inside the update's transaction: checked against the channel as stored now.
    if (stored) requireSecretsRetyped(input.type, kept.kept, stored.config, config);
    return { name: input.name, type: input.type, config, rules: input.rules, min_severity: input.min_severity, quiet_hours: input.quiet_hours ?? null };
  }

  const subject = (c: { id: number; name: string }) => ({ type: 'notification_channel', id: String(c.id), name: c.name });

  const createTx = ctx.transaction((input: ChannelInput): Channel => {
    const value = resolve(input, undefined);
    const now = ctx.clock.now();
    const id = repo.insertChannel(value, now);
    deps.audit.write({
      action: 'notification_channel.create',
      subject: subject({ id, name: value.name }),
      summary: `${nameOf()} added notification channel “${value.name}” (${value.type})`,
      changes: configChanges(value.type, {}, value.config),
    });
    return present(repo.channel(id)!);
  });

  const updateTx = ctx.transaction((id: number, input: ChannelInput): Channel => {
    const before = repo.channel(id);
    if (!before) throw notFound('channel not found');
    const value = resolve(input, before);
    repo.updateChannel(id, value, ctx.clock.now());
    const plain = (['name', 'type', 'min_severity'] as const)
      .filter((f) => before[f] !== value[f])
      .map((f) => ({ field: f, before: before[f], after: value[f] }));
    const json = (['rules', 'quiet_hours'] as const)
      .filter((f) => JSON.stringify(before[f]) !== JSON.stringify(value[f]))
      .map((f) => ({ field: f, before: before[f], after: value[f] }));
    deps.audit.write({
      action: 'notification_channel.update',
      subject: subject({ id, name: value.name }),
      summary: `${nameOf()} changed notification channel “${value.name}”`,
      changes: [...plain, ...json, ...configChanges(value.type, before.type === value.type ? before.config : {}, value.config)],
    });
    return present(repo.channel(id)!);
  });

  const deleteTx = ctx.transaction((id: number): void => {
    const before = repo.channel(id);
    if (!before) throw notFound('channel not found');
    repo.deleteChannel(id);
    deps.audit.write({
      action: 'notification_channel.delete',
      subject: subject(before),
      summary: `${nameOf()} removed notification channel “${before.name}”`,
    });
  });

  // Re-checked inside the transaction: the channel may have been removed while the message was on its way.
  const recordTest = ctx.transaction((id: number, channel: StoredChannel, error: string | null): TestOutcome => {
    if (!repo.channel(id)) throw notFound('channel not found');
    const deliveryId = repo.insertTest(channel, error, ctx.clock.now());
    deps.audit.write({
      action: 'notification_channel.test',
      subject: subject(channel),
      summary: `${nameOf()} sent a test through notification channel “${channel.name}”: ${error === null ? 'delivered' : 'not delivered'}`,
      detail: { delivery_id: deliveryId, ok: error === null },
    });
    return { ok: error === null, error, delivery_id: deliveryId };
  });

  /** Why a channel does not send this alert now, or undefined when it does. */
  function suppressedBecause(channel: StoredChannel, alert: Alert, now: number): string | undefined {
    const host = hostOf(alert);
    if (host !== undefined && deps.isMuted(host)) return 'the host is muted';
    if (inQuietHours(channel.quiet_hours, now)) return 'quiet hours';
    return undefined;
  }

  const wants = (channel: StoredChannel, alert: Alert) =>
    (channel.rules === 'all' || channel.rules.includes(alert.rule)) && SEVERITIES.indexOf(alert.severity) >= SEVERITIES.indexOf(channel.min_severity);

  return {
    list: (): Channel[] => repo.channels().map(present),
    get(id: number): Channel {
      const c = repo.channel(id);
      if (!c) throw notFound('channel not found');
      return present(c);
    },
    create: createTx,
    update: updateTx,
    remove: deleteTx,
    deliveries: (limit: number, channelId?: number): Delivery[] => repo.list(limit, channelId),

    /** Sends a test message now (one attempt, no retries) and says how it went; the attempt is in the delivery log and the audit. */
    async test(id: number): Promise<TestOutcome> {
      const channel = repo.channel(id);
      if (!channel) throw notFound('channel not found');
      const error = await queue.attemptOnce(channel, 'test', null);
      return recordTest(id, channel, error);
    },

    /** Inside the transaction that fired or resolved `alert`: one delivery per channel that wants it. */
    onAlert(alert: Alert, event: 'alert.firing' | 'alert.resolved'): void {
      const now = ctx.clock.now();
      let queued = false;
      const payload = JSON.stringify(alert);
      for (const channel of repo.channels()) {
        if (!wants(channel, alert)) continue;
        const suppressed = suppressedBecause(channel, alert, now);
        repo.insertDelivery({ channel, alertId: alert.id, event, payload, now, suppressed });
        if (suppressed === undefined) queued = true;
      }
      if (queued) ctx.afterCommit(() => queue.wake());
      if (++pruneCount % 500 === 0) repo.prune();
    },

    start: () => queue.start(),
    close: () => queue.close(),
  };
}

export type NotificationService = ReturnType<typeof createNotificationService>;
