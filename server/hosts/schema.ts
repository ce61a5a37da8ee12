import { isIP } from 'node:net';
import * as z from 'zod';
import type * as wire from '../contract/hosts.js';
import { validationFailed } from '../errors.js';
import { fieldErrors, shared, type Agrees, type Same } from '../http/validate.js';
import { VERSION_PATTERN } from '../releases/releases.js';
import { guestMetricFields, HostMetrics } from './metric-report.js';

export const DAY_S = 24 * 60 * 60;

/** POST /api/hosts/enrollment-tokens */
export const EnrollmentTokenCreate = z.lazy(() =>
  z.object(
    {
      name: z.string({ error: 'must be a string' }).trim().max(100, { error: 'must be at most 100 characters' }).default(''),
      expires_in_s: z
        .int({ error: 'must be an integer number of seconds' })
        .min(60, { error: 'must be at least 60' })
        .max(30 * DAY_S, { error: 'must be at most 2592000 (30 days)' })
        .default(DAY_S),
      max_uses: z.int({ error: 'must be an integer' }).min(1, { error: 'must be at least 1' }).max(1000, { error: 'must be at most 1000' }).default(1),
      /** A re-bind token: it enrolls only this host's machine id again (onto the same host, with a new host token). */
      host_id: z.int({ error: 'must be a host id' }).positive({ error: 'must be a host id' }).optional(),
    },
    { error: 'must be a JSON object' },
  ).refine((v) => v.host_id === undefined || v.max_uses === 1, { error: 'a re-bind token (host_id) is used once: max_uses must be 1', path: ['max_uses'] }),
);
// The wire types are written once, in server/contract; the schemas are checked against them.
export type EnrollmentTokenCreate = wire.EnrollmentTokenCreate;

const hostname = shared(() =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(253, { error: 'must be at most 253 characters' })
    .regex(/^[A-Za-z0-9._-]+$/, { error: 'must be a host name (letters, digits, dot, hyphen, underscore)' }),
);

const agentVersion = shared(() =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .regex(VERSION_PATTERN, { error: 'must be a version such as 1.2.3' })
    .max(64, { error: 'must be at most 64 characters' }),
);

/** POST /api/agent/enroll */
export const EnrollBody = z.lazy(() =>
  z.object(
    {
      hostname: hostname(),
      machine_id: z
        .string({ error: 'must be a string' })
        .trim()
        .min(1, { error: 'must not be empty' })
        .max(128, { error: 'must be at most 128 characters' })
        .regex(/^[A-Za-z0-9._:-]+$/, { error: 'must be letters, digits, dot, colon, hyphen or underscore' }),
      agent_version: agentVersion(),
    },
    { error: 'must be a JSON object' },
  ),
);
export type EnrollBody = wire.EnrollRequest;

/** A bash agent may send numbers as digit strings (uptime straight from /proc/uptime, say); both are taken, whole seconds kept. */
const count = shared(() =>
  z.union(
    [z.number().nonnegative().max(Number.MAX_SAFE_INTEGER).transform(Math.floor), z.string().regex(/^\d{1,15}(\.\d+)?$/).transform((v) => Math.floor(Number(v)))],
    { error: 'must be a non-negative number of seconds' },
  ),
);

/**
 * C0 and C1 controls, DEL, and the bidirectional overrides that make a text display as another: a
 * host reports these strings and the dashboard, the registry (through drift) and notifications show them.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const text = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .max(max, { error: `must be at most ${max} characters` })
    .refine((v) => !CONTROL.test(v), { error: 'must not contain control characters' });

/** Proxmox's lock names: backup, migrate, snapshot, snapshot-delete, clone, rollback, suspended, … */
const LOCK = /^[a-z][a-z-]{0,31}$/;

export const Guest = z.lazy(() =>
  z.object(
    {
      vmid: z.union([z.int().positive(), z.string().regex(/^[1-9]\d{0,14}$/).transform(Number)], { error: 'must be a positive integer' }),
      // A Proxmox guest name is a DNS name; markup in one is an attempt to inject it where names are shown.
      name: text(200)
        .refine((v) => !/[<>]/.test(v), { error: 'must not contain < or >' })
        .default(''),
      type: z.enum(['qemu', 'lxc'], { error: 'must be qemu or lxc' }),
      status: text(32).default(''),
      // PRODUCT.md: "each heartbeat guest may carry config_sha256, the SHA-256 of its config as the agent uploads it"
      config_sha256: z.string({ error: 'must be a SHA-256 in hex' }).regex(/^[0-9a-f]{64}$/, { error: 'must be a SHA-256 in hex' }).nullable().optional(),
      // PRODUCT.md "Agents on real Proxmox": `template: true|false` and `lock`; PVE itself says 1 and 0.
      template: z
        .union([z.boolean(), z.literal(0), z.literal(1), z.literal('0'), z.literal('1')], { error: 'must be true or false' })
        .nullable()
        .optional()
        .transform((v) => v === true || v === 1 || v === '1'),
      // A lock's name reaches the 409's text and the dashboard: one short lowercase word, nothing else.
      lock: z
        .string({ error: 'must be a lock name such as backup' })
        .regex(LOCK, { error: 'must be a lock name such as backup (lowercase letters and hyphens)' })
        .nullable()
        .optional()
        .transform((v) => v ?? null),
    },
    { error: 'must be an object' },
  ),
);
export type Guest = wire.Guest;
type _Guest = Agrees<Same<z.infer<typeof Guest>, wire.Guest>>;

/** A heartbeat's guest: the guest itself and, optionally, its numbers (metric-report.ts). */
const guestReport = shared(() => Guest.unwrap().extend(guestMetricFields()));

/** ISO 8601 UTC, as PRODUCT.md fixes for times sent by agents. */
const isoUtc = shared(() =>
  z
    .string({ error: 'must be an ISO 8601 UTC time' })
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/, { error: 'must be an ISO 8601 UTC time such as 2026-11-22T10:15:00Z' })
    .transform((v, ctx) => {
      const ms = Date.parse(v);
      if (Number.isNaN(ms)) {
        ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 UTC time such as 2026-11-22T10:15:00Z' });
        return z.NEVER;
      }
      return ms;
    }),
);

/** POST /api/agent/heartbeat */
export const HeartbeatBody = z.lazy(() =>
  z.object(
    {
      agent_version: agentVersion(),
      started_at: isoUtc(),
      hostname: hostname(),
      addresses: z
        .array(z.string({ error: 'must be an IP address' }).refine((v) => isIP(v) !== 0, { error: 'must be an IP address' }), { error: 'must be an array of strings' })
        .max(256, { error: 'must hold at most 256 addresses' })
        .default([]),
      uptime_s: count().optional(),
      hypervisor_version: text(200).default(''),
      metrics: HostMetrics,
      guests: z.array(guestReport(), { error: 'must be an array of guests' }).max(10_000, { error: 'must hold at most 10000 guests' }),
    },
    { error: 'must be a JSON object' },
  ),
);
/** As the server reads it: times in ms, counts as numbers. */
export type HeartbeatBody = z.infer<typeof HeartbeatBody>;

/** The heartbeat without its guests' fields, which parseHeartbeat checks a slice at a time. */
const HeartbeatEnvelope = z.lazy(() =>
  HeartbeatBody.unwrap().extend({
    guests: z.array(z.unknown(), { error: 'must be an array of guests' }).max(10_000, { error: 'must hold at most 10000 guests' }),
  }),
);
const GUESTS_PER_TURN = 500;

/**
 * HeartbeatBody's parse, its guests checked 500 at a time, each slice in its own turn of the event
 * loop: 10,000 guests with their numbers are a quarter of a second of checking, which other
 * requests would otherwise wait out. Throws the same 400 (`guests.3.name`) as the schema would.
 */
export async function parseHeartbeat(value: unknown): Promise<HeartbeatBody> {
  const envelope = HeartbeatEnvelope.safeParse(value);
  const issues = envelope.success ? [] : [...envelope.error.issues];
  // The guests are checked even when the rest is wrong: the 400 names every bad field at once.
  const given = (value as { guests?: unknown } | null)?.guests;
  const raw = envelope.success ? envelope.data.guests : Array.isArray(given) && given.length <= 10_000 ? (given as unknown[]) : [];
  const guests: HeartbeatBody['guests'] = [];
  const schema = guestReport();
  for (let start = 0; start < raw.length; start += GUESTS_PER_TURN) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    raw.slice(start, start + GUESTS_PER_TURN).forEach((guest, i) => {
      const parsed = schema.safeParse(guest);
      if (parsed.success) guests.push(parsed.data);
      else issues.push(...parsed.error.issues.map((issue) => ({ ...issue, path: ['guests', start + i, ...issue.path] })));
    });
  }
  if (issues.length || !envelope.success) throw validationFailed(fieldErrors(new z.ZodError(issues)));
  return { ...envelope.data, guests };
}

/** PATCH /api/hosts/:id */
export const HostPatch = z.lazy(() =>
  z
    .object(
      {
        sync_registry: z.boolean({ error: 'must be true or false' }).optional(),
        // Allowing any enrollment token to re-bind the host was a takeover window; say what replaced it.
        allow_rebind: z.never({ error: 'is replaced by re-bind tokens: POST /api/hosts/enrollment-tokens with {"host_id": <this host>}' }).optional(),
      },
      { error: 'must be a JSON object' },
    )
    .refine((v) => v.sync_registry !== undefined, { error: 'give sync_registry' }),
);
export type HostPatch = wire.HostPatch;

/** POST /api/hosts/:id/upgrade: no version means the manifest's current one; an older version needs `rollback: true`. */
export const UpgradeRequest = z.lazy(() =>
  z
    .object({ version: agentVersion().optional(), rollback: z.boolean({ error: 'must be true or false' }).optional() }, { error: 'must be a JSON object' })
    .default({}),
);
export type UpgradeRequest = wire.UpgradeRequest;

/** POST /api/hosts/:id/drift/apply */
export const DriftApply = z.lazy(() =>
  z
    .object(
      {
        all: z.boolean({ error: 'must be true or false' }).optional(),
        items: z
          .array(z.object({ vmid: z.int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }) }), {
            error: 'must be an array of {vmid}',
          })
          .max(10_000)
          .optional(),
      },
      { error: 'must be a JSON object' },
    )
    .refine((v) => v.all === true || (v.items && v.items.length > 0), { error: 'give items or all: true' }),
);
export type DriftApply = wire.DriftApply;
