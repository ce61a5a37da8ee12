import * as z from 'zod';
import { REDACTED, REQUIRED_CONFIG, SECRET_FIELDS, type JobBase, type JobKey } from '../contract/jobs.js';
import { shared } from '../http/validate.js';

/** Runs kept per job: on reads, after each run, at start-up and after import. */
export const RUNS_KEPT = 10;
export const DEFAULT_SCHEDULE = 15;


/** The jobs created on start (file databases only), disabled, with empty config. */
export const JOB_DEFINITIONS: Record<JobKey, { name: string; description: string }> = {
  tailscale_sync: {
    name: 'Tailscale sync',
    description: 'Sets the tailscale flag and tailscale_ip of instances whose name matches a device of the tailnet.',
  },
  patchmon_sync: {
    name: 'PatchMon sync',
    description: 'Sets the patchmon flag of instances whose name matches a host known to PatchMon.',
  },
  semaphore_sync: {
    name: 'Semaphore sync',
    description: 'Sets the semaphore flag of instances whose name is a host of a Semaphore inventory.',
  },
};

/** An http(s) URL without credentials (fetch refuses those, and they would be a secret outside the secret fields). */
const httpUrl = shared(() =>
  z
    .string({ error: 'must be a string' })
    .refine((value) => {
      if (value === '') return true;
      try {
        const url = new URL(value);
        return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
      } catch {
        return false;
      }
    }, { error: 'must be an http(s) URL without credentials' }),
);

/** "unknown field api_key" names the typo; anything else about the object is its type. */
const configError = (issue: { code?: string; keys?: string[] }) =>
  issue.code === 'unrecognized_keys' ? `unknown field${issue.keys!.length > 1 ? 's' : ''} ${issue.keys!.join(', ')}` : 'must be a JSON object';

const text = shared(() => z.string({ error: 'must be a string' }).max(4096, { error: 'must be at most 4096 characters' }));
/**
 * A secret goes into an HTTP header; a control character there makes fetch throw an error that
 * quotes the header, secret included. Refused when saved rather than found at run time.
 */
const secret = shared(() => text().refine((value) => !/[\u0000-\u001f\u007f-\u009f]/.test(value), { error: 'must not contain control characters (line breaks, tabs)' }));
const runOnCreate = shared(() => z.boolean({ error: 'must be true or false' }));

/**
 * Stored config per key. Strict: an unknown field is a 400, so a typo (`apikey`) is not
 * silently kept. Empty strings mean "not set".
 */
export const JOB_CONFIG: Record<JobKey, z.ZodType<Record<string, unknown>>> = {
  tailscale_sync: z.lazy(() =>
    z.strictObject(
      { api_key: secret().optional(), tailnet: text().optional(), api_url: httpUrl().optional(), run_on_create: runOnCreate().optional() },
      { error: configError },
    ),
  ),
  patchmon_sync: z.lazy(() =>
    z.strictObject(
      { api_url: httpUrl().optional(), api_token: secret().optional(), run_on_create: runOnCreate().optional() },
      { error: configError },
    ),
  ),
  semaphore_sync: z.lazy(() =>
    z.strictObject(
      { api_url: httpUrl().optional(), api_token: secret().optional(), run_on_create: runOnCreate().optional() },
      { error: configError },
    ),
  ),
};

export interface JobRow extends JobBase {
  /** JSON text of the config object. */
  config: string;
}

export function redactConfig(config: Record<string, unknown>): Record<string, unknown> {
  const shown = { ...config };
  for (const field of SECRET_FIELDS) {
    if (field in shown && shown[field] !== '') shown[field] = REDACTED;
  }
  return shown;
}

/** A field counts as set when it is a non-empty string after trimming. */
export function configText(config: Record<string, unknown>, field: string): string | undefined {
  const value = config[field];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

export function missingConfigFields(key: JobKey, config: Record<string, unknown>): string[] {
  return REQUIRED_CONFIG[key].filter((field) => configText(config, field) === undefined);
}

/** Every form a stored secret may take in an error text: as stored, trimmed, base64 (Basic auth), URL-encoded. */
function secretForms(config: Record<string, unknown>): string[] {
  const forms = new Set<string>();
  for (const field of SECRET_FIELDS) {
    const value = config[field];
    if (typeof value !== 'string' || value.trim() === '') continue;
    for (const v of [value, value.trim()]) {
      forms.add(v);
      forms.add(Buffer.from(v, 'utf8').toString('base64'));
      forms.add(encodeURIComponent(v));
      forms.add(JSON.stringify(v).slice(1, -1));
      // A secret with a line break may be quoted one line at a time.
      for (const line of v.split(/[\r\n]+/)) if (line.trim().length >= 4) forms.add(line.trim());
    }
  }
  // Longest first, so a secret is replaced whole before any part of it.
  return [...forms].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * An error text with every stored secret of the config replaced by `**REDACTED**`. A short secret
 * (under 8 characters, never a real credential) is replaced only where it stands alone, so a token
 * "t" does not turn every word of the message into `**REDACTED**`.
 */
export function scrubSecrets(text: string, config: Record<string, unknown>): string {
  let out = text;
  for (const form of secretForms(config)) {
    out = form.length >= 8
      ? out.split(form).join(REDACTED)
      : out.replace(new RegExp(`(?<![A-Za-z0-9])${escapeRegExp(form)}(?![A-Za-z0-9])`, 'g'), REDACTED);
  }
  return out;
}

/** The stored config text as an object; anything unreadable is an empty config. */
export function parseStoredConfig(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
