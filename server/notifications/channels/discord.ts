import { post } from './http.js';
import type { Sender } from './types.js';

export interface DiscordConfig {
  webhook_url: string;
}

/** Discord refuses content over 2,000 characters. */
const MAX = 2000;

/** `POST config.webhook_url` JSON `{content}`. */
export const sendDiscord: Sender<DiscordConfig> = async (config, n, options) => {
  const content = `**${n.title}**\n${n.message}`;
  await post(
    config.webhook_url,
    { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ content: content.length > MAX ? `${content.slice(0, MAX - 1)}…` : content, allowed_mentions: { parse: [] } }) },
    options,
  );
};
