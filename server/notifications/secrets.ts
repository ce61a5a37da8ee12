import { REDACTED } from '../contract/jobs.js';
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
 * type only: another type's secret means something else). Returns the field that has nothing to
 * keep, if any.
 */
export function keepSecrets(type: ChannelType, incoming: Record<string, unknown>, stored: { type: ChannelType; config: Record<string, unknown> } | undefined): { config: Record<string, unknown>; missing?: string } {
  const config = { ...incoming };
  for (const field of CHANNEL_SECRET_FIELDS[type]) {
    if (config[field] !== REDACTED) continue;
    const kept = stored && stored.type === type ? stored.config[field] : undefined;
    if (kept === undefined) return { config, missing: field };
    config[field] = kept;
  }
  return { config };
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
