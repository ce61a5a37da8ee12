import { headerText, post } from './http.js';
import type { Sender } from './types.js';

export interface NtfyConfig {
  server: string;
  topic: string;
  token?: string;
}

/** `POST <server>/<topic>`, the message as the body, `Title`, `Priority`, `Tags` headers, the token as a bearer. */
export const sendNtfy: Sender<NtfyConfig> = async (config, n, options) => {
  const headers: Record<string, string> = {
    'Content-Type': 'text/plain; charset=utf-8',
    Title: headerText(n.title),
    Priority: String(n.priority),
    Tags: n.tags.join(','),
  };
  if (config.token) headers.Authorization = `Bearer ${config.token}`;
  await post(`${config.server.replace(/\/+$/, '')}/${encodeURIComponent(config.topic)}`, { headers, body: n.message }, options);
};
