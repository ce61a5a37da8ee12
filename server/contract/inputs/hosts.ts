import * as z from 'zod';
import { AGENT_CHANNELS, VERSION_PATTERN } from '../versions.js';
import { guestMetricFields, HostMetrics } from './metrics.js';
import { oneOf, shared } from './parts.js';
import { heartbeatStorageFields } from './storage.js';

const DAY_S = 24 * 60 * 60;

/** POST /api/hosts/enrollment-tokens, as the server reads it (defaults: 1 day, 1 use). */
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
export type EnrollmentTokenCreate = z.output<typeof EnrollmentTokenCreate>;

/** DELETE /api/hosts/:id?force=true: removed at once, 200, rather than 202 while the host's receipt is awaited. */
export const HostDeleteQuery = z.lazy(() => z.object({ force: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().describe('`true`: remove at once, without waiting for the host\'s receipt') }));
export type HostDelete = z.output<typeof HostDeleteQuery>;

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

/** POST /api/agent/enroll, with an `hfe_` token. */
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
export type EnrollRequest = z.output<typeof EnrollBody>;

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

/**
 * A guest (VM or container) as a heartbeat reports it (a bash agent may send the vmid as digits in a
 * string) and, read, as the host's page shows it (`Guest`).
 */
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
      // (server/operations/guest-configs.ts); a new one is sent to POST /api/agent/guest-configs.
      config_sha256: z.string({ error: 'must be a SHA-256 in hex' }).regex(/^[0-9a-f]{64}$/, { error: 'must be a SHA-256 in hex' }).nullable().optional(),
      // PRODUCT.md "Agents on real Proxmox": `template: true|false` and `lock`; PVE itself says 1 and 0, older nodes "1" and "0".
      // A template never drifts and cannot start; it is what deploy clones.
      template: z
        .union([z.boolean(), z.literal(0), z.literal(1), z.literal('0'), z.literal('1')], { error: 'must be true or false' })
        .nullable()
        .optional()
        .transform((v) => v === true || v === 1 || v === '1'),
      // A lock's name reaches the 409's text and the dashboard: one short lowercase word, nothing else.
      // Actions are refused while one holds; null when unlocked.
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
/** A guest a host reported in its last heartbeat. */
export type Guest = z.output<typeof Guest>;

/** A heartbeat's guest: the guest itself and, optionally, its numbers (inputs/metrics.ts). */
export const guestReport = shared(() => Guest.unwrap().extend(guestMetricFields()));
export type GuestReport = z.input<ReturnType<typeof guestReport>>;

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

/**
 * POST /api/agent/heartbeat, with the `hfh_` token. `isIP` is node:net's (0 for anything but an
 * address): the server builds the schema with it (server/hosts/schema.ts).
 */
export function heartbeatBody(isIP: (text: string) => number) {
  return z.object(
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
      // PRODUCT.md: "heartbeats report allows_scripts" (installed with --allow-scripts); an older agent says nothing: false.
      allows_scripts: z.boolean({ error: 'must be true or false' }).default(false),
      metrics: HostMetrics,
      guests: z.array(guestReport(), { error: 'must be an array of guests' }).max(10_000, { error: 'must hold at most 10000 guests' }),
      // PRODUCT.md "Host storage": the node's storages, and the hash of the volumes the agent last sent.
      ...heartbeatStorageFields(),
    },
    { error: 'must be a JSON object' },
  );
}
/** As the agent sends it: times ISO 8601 UTC, counts as numbers or digit strings. */
export type HeartbeatRequest = z.input<ReturnType<typeof heartbeatBody>>;
/** As the server reads it: times in ms, counts as numbers. */
export type Heartbeat = z.output<ReturnType<typeof heartbeatBody>>;

/** The agent's collectors ("plugins"), each on or off per host; `backups` is stored and sent before the agent has its collector. */
export const COLLECTORS = ['metrics', 'configs', 'storage', 'backups'] as const;
export type Collector = (typeof COLLECTORS)[number];
export type Collectors = Record<Collector, boolean>;

/** PATCH /api/hosts/:id: the fields given change, the others stay; `collectors` names only those that change. */
export const HostPatch = z.lazy(() =>
  z
    .object(
      {
        sync_registry: z.boolean({ error: 'must be true or false' }).optional(),
        // Allowing any enrollment token to re-bind the host was a takeover window; say what replaced it.
        allow_rebind: z.never({ error: 'is replaced by re-bind tokens: POST /api/hosts/enrollment-tokens with {"host_id": <this host>}' }).optional(),
        agent_channel: oneOf(AGENT_CHANNELS).optional(),
        // Whether the version ships is the server's to say (400 naming it): it reads the release files.
        agent_pin: agentVersion().nullable().optional(),
        collectors: z
          .strictObject(
            Object.fromEntries(COLLECTORS.map((c) => [c, z.boolean({ error: 'must be true or false' }).optional()])) as Record<Collector, z.ZodOptional<z.ZodBoolean>>,
            {
              error: (issue) =>
                issue.code === 'unrecognized_keys'
                  ? `has no collector ${issue.keys.join(', ')}: the collectors are ${COLLECTORS.join(', ')}`
                  : `must be an object of ${COLLECTORS.join(', ')}: true or false`,
            },
          )
          .optional(),
      },
      { error: 'must be a JSON object' },
    )
    .refine((v) => v.sync_registry !== undefined || v.agent_channel !== undefined || v.agent_pin !== undefined || v.collectors !== undefined, {
      error: 'give sync_registry, agent_channel, agent_pin or collectors',
    }),
);
export type HostPatch = z.output<typeof HostPatch>;

/** POST /api/hosts/:id/upgrade: no version means the manifest's current one; an older version needs `rollback: true`. Answers the HostSummary (202). */
export const UpgradeRequest = z.lazy(() =>
  z
    .object({ version: agentVersion().optional(), rollback: z.boolean({ error: 'must be true or false' }).optional() }, { error: 'must be a JSON object' })
    .default({}),
);
export type UpgradeRequest = z.output<typeof UpgradeRequest>;

/** POST /api/hosts/:id/drift/apply: named vmids, or every item that may be applied in bulk. */
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
export type DriftApply = z.output<typeof DriftApply>;
