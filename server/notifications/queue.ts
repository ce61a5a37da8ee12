import type { AppContext } from '../context.js';
import type { Alert } from '../contract/alerts.js';
import { isoMillis } from '../time.js';
import { send } from './channels/index.js';
import { DeliveryError } from './channels/types.js';
import { notificationOf } from './message.js';
import type { NotificationRepo, StoredChannel } from './repo.js';
import { scrub } from './secrets.js';

export interface DeliveryOptions {
  /** Waits before the retries: PRODUCT.md's 1 s, 10 s, 60 s; tests shorten them. */
  retryDelaysMs?: readonly number[];
  /** One attempt's limit (default 10 s). */
  timeoutMs?: number;
  /** How often due deliveries are looked for besides being woken (default 500 ms). */
  pollMs?: number;
}

/**
 * Sends what the delivery table holds: pending rows whose time has come, each attempt recorded
 * there (so a restart goes on where it stopped), a failed one retried after the next delay, the
 * last failure final. One attempt per delivery at a time.
 */
export function createDeliveryQueue(ctx: AppContext, repo: NotificationRepo, options: DeliveryOptions = {}) {
  const delays = options.retryDelaysMs ?? [1_000, 10_000, 60_000];
  const timeoutMs = options.timeoutMs ?? 10_000;
  const inflight = new Map<number, Promise<void>>();
  const shutdown = new AbortController();
  let wakeQueued = false;
  let closed = false;

  /** One attempt at a channel; the error text is safe to store (no secret, no URL). */
  async function attemptOnce(channel: StoredChannel, event: 'alert.firing' | 'alert.resolved' | 'test', alert: Alert | null): Promise<string | null> {
    try {
      await send(channel.type, channel.config, notificationOf(event, alert, isoMillis(ctx.clock.now())), { timeoutMs, signal: shutdown.signal });
      return null;
    } catch (err) {
      return scrub(err instanceof DeliveryError ? err.message : 'sending failed', channel.type, channel.config);
    }
  }

  async function deliver(row: ReturnType<NotificationRepo['due']>[number]): Promise<void> {
    const channel = row.channel_id === null ? undefined : repo.channel(row.channel_id);
    const attempts = row.attempts + 1;
    if (!channel) {
      repo.attempted(row.id, 'failed', row.attempts, 'the channel was deleted', null, ctx.clock.now());
      return;
    }
    const error = await attemptOnce(channel, row.event, JSON.parse(row.payload) as Alert | null);
    if (closed && error !== null) return; // stopped mid-attempt: left pending, tried again after the restart
    const now = ctx.clock.now();
    if (error === null) repo.attempted(row.id, 'sent', attempts, null, null, now);
    else if (attempts <= delays.length) repo.attempted(row.id, 'pending', attempts, error, now + delays[attempts - 1]!, now);
    else repo.attempted(row.id, 'failed', attempts, error, null, now);
    if (error !== null) ctx.logger.warn({ delivery_id: row.id, channel_id: channel.id, attempt: attempts, error }, 'notification not delivered');
  }

  function pump(): void {
    wakeQueued = false;
    if (closed) return;
    for (const row of repo.due(ctx.clock.now(), 20)) {
      if (inflight.has(row.id)) continue;
      const run = deliver(row)
        .catch((err: Error) => ctx.logger.error({ err: { message: err.message }, delivery_id: row.id }, 'notification delivery failed'))
        .finally(() => {
          inflight.delete(row.id);
          wake();
        });
      inflight.set(row.id, run);
    }
  }

  function wake(): void {
    if (wakeQueued || closed) return;
    wakeQueued = true;
    setImmediate(pump);
  }

  return {
    wake,
    attemptOnce,
    start(): void {
      ctx.tasks.every('notifications.deliver', options.pollMs ?? 500, pump);
      wake();
    },
    async close(): Promise<void> {
      closed = true;
      shutdown.abort();
      await Promise.allSettled(inflight.values());
    },
  };
}

export type DeliveryQueue = ReturnType<typeof createDeliveryQueue>;
