import { REDACTED } from '../contract/jobs.js';
import { HttpError } from '../errors.js';
import { CHANNEL_SECRET_FIELDS, type ChannelType } from '../contract/notifications.js';


const isSecret = (type: ChannelType, field: string) => CHANNEL_SECRET_FIELDS[type].includes(field);

/** The config as the API shows it: each secret field that is set reads `**REDACTED**`. */
export function redact(type: ChannelType, config: Record<string, unknown>): Record<string, unknown> {
  const shown = { ...config };
  for (const field of CHANNEL_SECRET_FIELDS[type]) if (shown[field] !== undefined && shown[field] !== '') shown[field] = REDACTED;
  return shown;
}

/**
 * A config sent back with `**REDACTED**` keeps the stored secret of that field (the same channel
 * type only: another type's secret means something else). Returns the fields it kept and the
 * field that has nothing to keep, if any.
 */
export function keepSecrets(type: ChannelType, incoming: Record<string, unknown>, stored: { type: ChannelType; config: Record<string, unknown> } | undefined): { config: Record<string, unknown>; kept: string[]; missing?: string } {
  const config = { ...incoming };
  const kept: string[] = [];
  for (const field of CHANNEL_SECRET_FIELDS[type]) {
    if (config[field] !== REDACTED) continue;
    const value = stored && stored.type === type ? stored.config[field] : undefined;
    if (value === undefined) return { config, kept, missing: field };
    config[field] = value;
    kept.push(field);
  }
  return { config, kept };
}

const url = (value: unknown) => (typeof value === 'string' && URL.canParse(value) ? new URL(value).href.replace(/\/+$/, '') : value);

/**
 * Where each type sends its secret, and how the error names it. Discord has none: its webhook URL
 * is the secret, so a new address is a new secret typed in. For e-mail, allowing the password in
 * plain text (without TLS from the start) is a new way of sending it, as a new server is.
 */
const DESTINATION: Record<ChannelType, { what: string; of: (config: Record<string, unknown>) => unknown[] }> = {
  webhook: { what: 'the URL', of: (c) => [url(c.url)] },
  ntfy: { what: 'the server', of: (c) => [url(c.server)] },
  gotify: { what: 'the server', of: (c) => [url(c.server)] },
  discord: { what: 'the webhook URL', of: () => [] },
  email: {
    what: 'the SMTP host, port or TLS setting',
    of: (c) => [String(c.host).toLowerCase(), c.port, c.allow_plaintext_password === true && c.secure !== true],
  },
};

/**
 * Stored secrets go only where they were first sent: a kept secret (`**REDACTED**` sent back) with a
 * changed destination is refused, naming the field to type again. Otherwise whoever may edit a
 * channel could point it at a listener of theirs and collect the secret with a test message.
 */
export function requireSecretsRetyped(type: ChannelType, kept: readonly string[], before: Record<string, unknown>, after: Record<string, unknown>): void {
  const { what, of } = DESTINATION[type];
  if (kept.length === 0 || JSON.stringify(of(before)) === JSON.stringify(of(after))) return;
  const message = `must be entered again when ${what} changes`;
  throw new HttpError(400, { error: `${kept.join(' and ')} ${message}`, errors: kept.map((field) => ({ field: `config.${field}`, message })) });
}

/** What an audit entry says changed in a config: secret fields only as set or not, never their values. */
export function configChanges(type: ChannelType, before: Record<string, unknown>, after: Record<string, unknown>) {
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return fields
    .filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]))
    .map((f) =>
      isSecret(type, f)
        ? { field: `config.${f}`, before: before[f] === undefined ? null : REDACTED, after: after[f] === undefined ? null : REDACTED }
        : { field: `config.${f}`, before: before[f] ?? null, after: after[f] ?? null },
    );
}

/** Belt and braces for error texts: any secret of the channel (or a line of one) that got in is cut out. */
export function scrub(text: string, type: ChannelType, config: Record<string, unknown>): string {
  let out = text;
  for (const field of CHANNEL_SECRET_FIELDS[type]) {
    const value = config[field];
    if (typeof value !== 'string' || value.length < 4) continue;
    for (const part of [value, ...value.split(/\r?\n/).filter((line) => line.length >= 6)]) out = out.split(part).join(REDACTED);
  }
  return out;
}
