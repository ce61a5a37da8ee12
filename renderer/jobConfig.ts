/**
 * Whether a job can run: the server says so in `configured` and `missing` (the config fields
 * still to set); until every server sends them, the same answer is worked out here from the
 * redacted config, with the rules of server/jobs/handlers (a field counts as set when it is a
 * non-empty string after trimming, or the redaction marker of a stored secret).
 */
import { REDACTED, REQUIRED_CONFIG, SECRET_FIELDS, type JobKey } from '../server/contract/jobs';

export interface JobConfigState {
  key: string;
  config: Record<string, unknown>;
  configured?: boolean;
  missing?: string[];
}

export const isSet = (value: unknown): boolean => value === REDACTED || (typeof value === 'string' && value.trim() !== '');

/** The config fields still to set before the job can run; empty when it is configured. */
export function missingFields(job: JobConfigState): string[] {
  if (Array.isArray(job.missing)) return job.missing;
  if (job.configured === true) return [];
  return (REQUIRED_CONFIG[job.key as JobKey] ?? []).filter((field) => !isSet(job.config[field]));
}

export function isConfigured(job: JobConfigState): boolean {
  return job.configured ?? missingFields(job).length === 0;
}

/** "patchmon_sync is not configured: set api_url and api_token" (the server's run-now wording). */
export function notConfiguredText(job: JobConfigState): string {
  const missing = missingFields(job);
  return missing.length ? `${job.key} is not configured: set ${missing.join(' and ')}` : `${job.key} is not configured`;
}

const trimmed = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/**
 * The stored secrets a save must carry again because the API URL box no longer holds the stored
 * URL: the server keeps a secret only for the address it was saved for (a cleared URL, where the
 * job then sends nothing, excepted; Tailscale's empty URL is its default address).
 */
export function secretsToRetype(job: JobConfigState, values: Record<string, unknown>): string[] {
  const url = trimmed(values.api_url);
  if (url === trimmed(job.config.api_url) || (url === '' && job.key !== 'tailscale_sync')) return [];
  return SECRET_FIELDS.filter((field) => job.config[field] === REDACTED && trimmed(values[field]) === '');
}
