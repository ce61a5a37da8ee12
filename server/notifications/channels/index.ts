import type * as z from 'zod';
import type { ChannelType } from '../../contract/notifications.js';
import { CHANNEL_CONFIGS } from '../schema.js';
import { sendDiscord } from './discord.js';
import { sendEmail } from './email.js';
import { sendGotify } from './gotify.js';
import { sendNtfy } from './ntfy.js';
import type { Sender } from './types.js';
import { sendWebhook } from './webhook.js';

type ConfigOf<K extends ChannelType> = z.infer<(typeof CHANNEL_CONFIGS)[K]>;

/** Every channel type: one file each, one entry here (as the agent commands and the job handlers). */
export const SENDERS: { [K in ChannelType]: Sender<ConfigOf<K>> } = {
  webhook: sendWebhook,
  ntfy: sendNtfy,
  gotify: sendGotify,
  discord: sendDiscord,
  email: sendEmail,
};

/** Sends with the sender of `type`; the config has been checked against that type's schema. */
export function send(type: ChannelType, config: Record<string, unknown>, ...rest: Parameters<Sender<unknown>> extends [unknown, ...infer R] ? R : never): Promise<void> {
  return (SENDERS[type] as Sender<Record<string, unknown>>)(config, ...rest);
}
