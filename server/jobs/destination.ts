import { REDACTED, SECRET_FIELDS, type JobKey } from '../contract/jobs.js';
import { HttpError } from '../errors.js';
import { configText } from './schema.js';

/** Where Tailscale's API is when `api_url` is not set. */
export const TAILSCALE_API_URL = 'https://api.tailscale.com';

/** A URL as it is called: parsed (host lower case, default port dropped), trailing slashes cut. */
function normalized(url: string | undefined): string {
  if (url === undefined) return '';
  try {
    return new URL(url).href.replace(/\/+$/, '');
  } catch {
    return url;
  }
}

/** The address a job sends its secret to; "" when it has none (the job cannot run). */
const DESTINATION: Record<JobKey, (config: Record<string, unknown>) => string> = {
  tailscale_sync: (config) => normalized(configText(config, 'api_url') ?? TAILSCALE_API_URL),
  patchmon_sync: (config) => normalized(configText(config, 'api_url')),
  semaphore_sync: (config) => normalized(configText(config, 'api_url')),
};

/**
 * A stored secret goes only where it was first sent: when `api_url` changes, every stored secret
 * the update does not type again (left out, or sent back as `**REDACTED**`) is refused with a 400
 * naming it. Otherwise whoever may edit a job could point it at a listener of theirs and collect
 * the write-only key with the next run.
 */
export function requireSecretsRetyped(key: JobKey, stored: Record<string, unknown>, sent: Record<string, unknown>, merged: Record<string, unknown>): void {
  const destination = DESTINATION[key](merged);
  if (destination === '' || destination === DESTINATION[key](stored)) return;
  const fields = SECRET_FIELDS.filter((field) => {
    if (configText(stored, field) === undefined || !(field in merged)) return false;
    return sent[field] === undefined || sent[field] === REDACTED;
  });
  if (fields.length === 0) return;
  const message = 'must be entered again when api_url changes';
  throw new HttpError(400, {
    error: `${fields.join(' and ')} ${message}`,
    errors: fields.map((field) => ({ field: `config.${field}`, message })),
  });
}
