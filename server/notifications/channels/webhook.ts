import { createHmac } from 'node:crypto';
import { post } from './http.js';
import type { Sender } from './types.js';

export interface WebhookConfig {
  url: string;
  secret?: string;
}

/** `POST config.url` JSON `{event, alert, sent_at}`; with a secret, `X-Homefleet-Signature: sha256=<hex HMAC-SHA256 of the body>`. */
export const sendWebhook: Sender<WebhookConfig> = async (config, n, options) => {
  const body = JSON.stringify({ event: n.event, alert: n.alert, sent_at: n.sentAt });
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'User-Agent': 'homefleet' };
  if (config.secret) headers['X-Homefleet-Signature'] = `sha256=${createHmac('sha256', config.secret).update(body).digest('hex')}`;
  await post(config.url, { headers, body }, options);
};
