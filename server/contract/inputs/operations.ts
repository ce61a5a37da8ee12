import * as z from 'zod';
import { idQuery, limitParam } from './page.js';
import { shared } from './parts.js';
import { rebuildFields } from './provisioning.js';

export const OPERATION_STATUSES = ['pending', 'sent', 'succeeded', 'failed', 'expired', 'cancelled'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];
/** Snapshot names, as `snapshot {name}` and `rollback {snapshot}` take them. */
export const SNAPSHOT_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;
/** A clone's name: a DNS label or name, as Proxmox takes for `--name` / `--hostname`. */
export const GUEST_NAME = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,61}[A-Za-z0-9])?$/;
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** C0 and C1 controls and bidirectional overrides: a reason is shown on pages and in the audit log. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const common = () => ({
  reason: z
    .string({ error: 'must be a string' })
    .max(500, { error: 'must be at most 500 characters' })
    .refine((v) => !CONTROL.test(v), { error: 'must not contain control characters' })
    .optional(),
  force: z.boolean({ error: 'must be true or false' }).optional(),
});
const snapshotName = shared(() =>
  z.string({ error: 'must be a snapshot name' }).regex(SNAPSHOT_NAME, {
    error: 'must start with a letter and hold only letters, digits, _ and - (at most 40 characters)',
  }),
);
const VMID_ERROR = 'must be a guest id from 100 to 999999999';

/**
 * POST /api/hosts/:id/guests/:vmid/actions: `{action, reason?, force?}` and the action's own fields;
 * "400 unknown action or bad field (errors)".
 */
export const GuestActionBody = z.lazy(() =>
  z.discriminatedUnion(
    'action',
    [
      z.object({ action: z.enum(['start', 'shutdown', 'stop', 'reboot', 'destroy']), ...common() }),
      z.object({ action: z.literal('snapshot'), name: snapshotName(), ...common() }),
      z.object({ action: z.literal('rollback'), snapshot: snapshotName(), ...common() }),
      z.object({
        action: z.literal('clone'),
        new_vmid: z.int({ error: VMID_ERROR }).min(100, { error: VMID_ERROR }).max(999_999_999, { error: VMID_ERROR }),
        name: z.string({ error: 'must be a guest name' }).regex(GUEST_NAME, { error: 'must be a DNS name: letters, digits, - and . (at most 63 characters)' }),
        full: z.boolean({ error: 'must be true or false' }).optional(),
        ...common(),
      }),
      // "re-creates the guest from its deploy spec (or from source_vmid plus deploy fields when it has none)"
      z.object({ action: z.literal('rebuild'), ...rebuildFields(), ...common() }),
    ],
    {
      error: (issue) =>
        issue.code === 'invalid_union'
          ? 'must be one of start, shutdown, stop, reboot, snapshot, rollback, clone, destroy, rebuild'
          : issue.code === 'invalid_type' && issue.path?.length === 0
            ? 'must be a JSON object'
            : undefined,
    },
  ),
);
export type GuestActionRequest = z.output<typeof GuestActionBody>;

const isoUtc = shared(() =>
  z
    .string({ error: 'must be an ISO 8601 UTC time' })
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/, { error: 'must be an ISO 8601 UTC time such as 2026-11-22T10:15:00Z' }),
);

/** POST /api/agent/operations/:operation_id/result; the output is cut to its last 4 KiB when stored (64 KiB of whole lines for logs). */
export const OperationResultBody = z.lazy(() =>
  z.object(
    {
      exit_code: z.int({ error: 'must be an integer' }).min(-1, { error: 'must be from -1 to 255' }).max(255, { error: 'must be from -1 to 255' }),
      output: z.string({ error: 'must be a string' }).max(1_000_000, { error: 'must be at most 1000000 characters' }).optional(),
      finished_at: isoUtc().optional(),
    },
    { error: 'must be a JSON object' },
  ),
);
export type OperationResult = z.output<typeof OperationResultBody>;

/** At most 64 KiB of config text, measured in bytes. */
export const MAX_CONFIG_BYTES = 64 * 1024;

const utf8 = new TextEncoder();

/** POST /api/agent/guest-configs (host token): the redacted text of `qm config` / `pct config`, at most 64 KiB. */
export const GuestConfigBody = z.lazy(() =>
  z.object(
    {
      vmid: z.int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }),
      sha256: z.string({ error: 'must be a SHA-256 in hex' }).regex(/^[0-9a-f]{64}$/, { error: 'must be a SHA-256 in hex' }),
      text: z
        .string({ error: 'must be a string' })
        .refine((v) => utf8.encode(v).length <= MAX_CONFIG_BYTES, { error: `must be at most ${MAX_CONFIG_BYTES} bytes` })
        .refine((v) => !v.includes('\u0000'), { error: 'must be text' }),
    },
    { error: 'must be a JSON object' },
  ),
);
export type GuestConfigUpload = z.output<typeof GuestConfigBody>;

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;
const clock = shared(() => z.string({ error: 'must be a time HH:MM' }).regex(HHMM, { error: 'must be a time HH:MM (00:00 to 23:59)' }));

/**
 * PUT /api/hosts/:id/maintenance; `timezone` defaults to `defaultTimezone` (the server's), and
 * `isTimeZone` is the server's check of a zone name (server/operations/maintenance-windows.ts).
 */
export function maintenanceBody(defaultTimezone: string, isTimeZone: (name: string) => boolean) {
  return z.object(
    {
      windows: z
        .array(
          z.object(
            {
              days: z
                .array(z.enum(WEEKDAYS, { error: `must be one of ${WEEKDAYS.join(', ')}` }), { error: 'must be an array of days' })
                .min(1, { error: 'must name at least one day' })
                .max(7, { error: 'must name each day once' })
                .refine((days) => new Set(days).size === days.length, { error: 'must name each day once' }),
              start: clock(),
              end: clock(),
            },
            { error: 'must be an object {days, start, end}' },
          ),
          { error: 'must be an array of windows' },
        )
        .max(50, { error: 'must hold at most 50 windows' })
        .default([]),
      timezone: z
        .string({ error: 'must be an IANA time zone' })
        .refine(isTimeZone, { error: 'must be an IANA time zone such as Europe/Berlin' })
        .default(defaultTimezone),
      auto_upgrade: z.boolean({ error: 'must be true or false' }).default(false),
      muted: z.boolean({ error: 'must be true or false' }).default(false),
    },
    { error: 'must be a JSON object' },
  );
}
/** PUT /api/hosts/:id/maintenance, as the server reads it (defaults applied). */
export type MaintenancePolicyInput = z.output<ReturnType<typeof maintenanceBody>>;
/** A window opens at `start` on each of `days` and closes at `end` (the next day when `end` is not after `start`). */
export type MaintenanceWindow = MaintenancePolicyInput['windows'][number];

/** GET /api/operations?host_id=&vmid=&status=&limit= */
export const OperationListQuery = z.lazy(() =>
  z.object({
    host_id: idQuery().optional().describe('only this host'),
    vmid: idQuery().optional().describe('only this guest'),
    status: z.enum(OPERATION_STATUSES, { error: `must be one of ${OPERATION_STATUSES.join(', ')}` }).optional(),
    limit: limitParam(100),
  }),
);
/** As a client sends it (limit 1 to 1000, 100 when absent). */
export type OperationListQuery = z.input<typeof OperationListQuery>;
export type OperationQuery = z.output<typeof OperationListQuery>;

/** `?wait=N` of GET /api/agent/commands: 0 to 30 seconds, 25 when absent. */
export const WaitQuery = z.lazy(() =>
  z.object({
    wait: z
      .string()
      .regex(/^\d{1,2}$/, { error: 'must be a whole number of seconds from 0 to 30' })
      .transform(Number)
      .pipe(z.number().max(30, { error: 'must be a whole number of seconds from 0 to 30' }))
      .optional()
      .transform((v) => v ?? 25)
      .describe('seconds to wait for a command, 0 to 30 (25)'),
  }),
);
export type Wait = z.output<typeof WaitQuery>;

/** `?against=` of a config diff: the version to compare with (default: the one before). */
export const AgainstQuery = z.lazy(() => z.object({ against: idQuery().optional().describe('the version to compare with (default: the one before)') }));
export type Against = z.output<typeof AgainstQuery>;
