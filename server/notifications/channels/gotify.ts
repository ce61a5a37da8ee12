import { post } from './http.js';
import type { Sender } from './types.js';

export interface GotifyConfig {
  server: string;
  token: string;
}

/** Gotify's priorities run 0–10; ntfy's 1–5 spread over them. */
const PRIORITY = { 1: 0, 2: 2, 3: 4, 4: 6, 5: 8 } as const;

/** `POST <server>/message` JSON `{title, message, priority}`, the token in `X-Gotify-Key`. */
export const sendGotify: Sender<GotifyConfig> = async (config, n, options) => {
  await post(
    `${config.server.replace(/\/+$/, '')}/message`,
    {
      headers: { 'Content-Type': 'application/json', 'X-Gotify-Key': config.token },
      body: JSON.stringify({ title: n.title, message: n.message, priority: PRIORITY[n.priority] }),
    },
    options,
  );
};
