import * as z from 'zod';
import type * as wire from '../contract/backup.js';
import { JOB_KEYS, RUN_STATUSES, type JobRun } from '../contract/jobs.js';
import { FLAGS, MAX_TAGS, STACKS, STATES, TAG } from '../contract/registry.js';
import { BackupInstance, isoTimestamp } from '../contract/inputs/backup.js';
import { MAX_SCHEDULE } from '../contract/inputs/jobs.js';
import { IPV4 } from '../contract/inputs/registry.js';
import { shared, type Agrees, type Same } from '../http/validate.js';
// A backup's rows are held to the rules of the features' own writes: their schemas, not copies.
import { JOB_CONFIG } from '../jobs/schema.js';

export { BACKUP_VERSION } from '../contract/backup.js';

// An instance row is the registry's own input with its timestamps (server/contract/inputs/backup.ts).
export { BackupInstance };

const flag = shared(() => z.union([z.literal(0), z.literal(1), z.boolean()], { error: 'must be 0 or 1' }).transform((v) => (v === true || v === 1 ? 1 : 0)));

/** A job row with its raw config; run summaries (last_run_at, ...) are ignored. */
export const BackupJob = z.lazy(() =>
  z
    .object({
      id: z.int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }),
      key: z.enum(JOB_KEYS, { error: `must be one of ${JOB_KEYS.join(', ')}` }),
      name: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }),
      description: z.string({ error: 'must be a string' }).default(''),
      enabled: flag().default(0),
      schedule: z
        .int({ error: `must be an integer from 1 to ${MAX_SCHEDULE}` })
        .min(1, { error: `must be an integer from 1 to ${MAX_SCHEDULE}` })
        .max(MAX_SCHEDULE, { error: `must be an integer from 1 to ${MAX_SCHEDULE}` })
        .default(15),
      config: z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }).default({}),
    })
    .superRefine((job, ctx) => {
      const parsed = JOB_CONFIG[job.key].safeParse(job.config);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: ['config', ...issue.path], message: issue.message });
      }
    }),
);
export type BackupJob = wire.BackupJob;
type _BackupJob = Agrees<Same<z.infer<typeof BackupJob>, wire.BackupJob>>;

export const BackupRun = z.lazy(() =>
  z.object({
    id: z.int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }),
    job_id: z.int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }),
    started_at: isoTimestamp(),
    ended_at: isoTimestamp().nullable().default(null),
    status: z.enum(RUN_STATUSES, { error: `must be one of ${RUN_STATUSES.join(', ')}` }),
    result: z.string({ error: 'must be a string' }).default(''),
  }),
);
export type BackupRun = JobRun;
type _BackupRun = Agrees<Same<z.infer<typeof BackupRun>, JobRun>>;

/** One entry of an instance's change timeline, as the export writes it (the vmid says whose). */
export const BackupHistoryEntry = z.lazy(() =>
  z.object({
    vmid: z.int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }),
    field: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(64, { error: 'must be at most 64 characters' }),
    old_value: z.string({ error: 'must be a string or null' }).nullable().default(null),
    new_value: z.string({ error: 'must be a string or null' }).nullable().default(null),
    changed_at: isoTimestamp(),
    changed_by: z.string({ error: 'must be a string or null' }).nullable().default(null),
  }),
);
export type BackupHistoryEntry = wire.BackupHistoryRow;
type _BackupHistoryEntry = Agrees<Same<z.infer<typeof BackupHistoryEntry>, wire.BackupHistoryRow>>;

const isNullableString = (v: unknown) => v === undefined || v === null || typeof v === 'string';

/** BackupHistoryEntry with a hand-written fast path for well-formed entries (see parseBackupInstance). */
export function parseBackupHistoryEntry(row: unknown): { success: true; data: BackupHistoryEntry } | { success: false; error: z.ZodError } {
  if (typeof row === 'object' && row !== null && !Array.isArray(row)) {
    const r = row as Record<string, unknown>;
    const { vmid, field, changed_at: at } = r;
    if (
      Number.isSafeInteger(vmid) && (vmid as number) > 0 &&
      typeof field === 'string' && field.length > 0 && field.length <= 64 &&
      typeof at === 'string' && TIMESTAMP.test(at) &&
      isNullableString(r.old_value) && isNullableString(r.new_value) && isNullableString(r.changed_by)
    ) {
      return {
        success: true,
        data: {
          vmid: vmid as number, field, changed_at: at,
          old_value: (r.old_value as string | null | undefined) ?? null,
          new_value: (r.new_value as string | null | undefined) ?? null,
          changed_by: (r.changed_by as string | null | undefined) ?? null,
        },
      };
    }
  }
  return BackupHistoryEntry.safeParse(row) as ReturnType<typeof parseBackupHistoryEntry>;
}

const STATE_SET = new Set<unknown>(STATES);
const STACK_SET = new Set<unknown>(STACKS);
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const isFlag = (v: unknown) => v === undefined || v === 0 || v === 1;
const isTimestamp = (v: unknown) => v === undefined || (typeof v === 'string' && TIMESTAMP.test(v));
/** Tags as an export writes them: valid, lower-case, sorted, each once. Anything else goes through the schema, which normalizes or refuses. */
const isKeptTags = (v: unknown) =>
  Array.isArray(v) && v.length <= MAX_TAGS && v.every((t, i) => typeof t === 'string' && TAG.test(t) && (i === 0 || (v[i - 1] as string) < t));

/**
 * BackupInstance for 100,000 rows: rows in the usual shape are checked by hand (a fraction of
 * zod's cost per row); anything else goes through the schema, which gives the same result
 * for what it accepts and the field messages for what it rejects.
 */
export function parseBackupInstance(row: unknown): { success: true; data: BackupInstance } | { success: false; error: z.ZodError } {
  if (typeof row === 'object' && row !== null && !Array.isArray(row)) {
    const r = row as Record<string, unknown>;
    const { vmid, name, tailscale_ip: ip } = r;
    if (
      Number.isSafeInteger(vmid) && (vmid as number) > 0 &&
      typeof name === 'string' && name.length > 0 && name.length <= 200 && name === name.trim() &&
      STATE_SET.has(r.state) && STACK_SET.has(r.stack) &&
      (ip === undefined || ip === '' || (typeof ip === 'string' && IPV4.test(ip))) &&
      FLAGS.every((flag) => isFlag(r[flag])) &&
      isTimestamp(r.created_at) && isTimestamp(r.updated_at) &&
      (r.tags === undefined || isKeptTags(r.tags))
    ) {
      // A row as this release exports it (every field present) is used as it is: no copy of 100,000
      // objects. Fields the import does not read may stay on it; nothing else sees the row.
      if (ip !== undefined && r.tags !== undefined && r.created_at !== undefined && r.updated_at !== undefined && FLAGS.every((flag) => r[flag] !== undefined)) {
        return { success: true, data: r as unknown as BackupInstance };
      }
      return {
        success: true,
        data: {
          vmid: vmid as number, name, state: r.state as BackupInstance['state'], stack: r.stack as BackupInstance['stack'], tailscale_ip: (ip as string | undefined) ?? '',
          atlas: (r.atlas ?? 0) as 0 | 1, argus: (r.argus ?? 0) as 0 | 1, semaphore: (r.semaphore ?? 0) as 0 | 1, patchmon: (r.patchmon ?? 0) as 0 | 1,
          tailscale: (r.tailscale ?? 0) as 0 | 1, andromeda: (r.andromeda ?? 0) as 0 | 1, hardware_acceleration: (r.hardware_acceleration ?? 0) as 0 | 1,
          // "a document without tags imports with none"
          tags: (r.tags as string[] | undefined) ?? [],
          created_at: r.created_at as string | undefined, updated_at: r.updated_at as string | undefined,
        },
      };
    }
  }
  return BackupInstance.safeParse(row) as ReturnType<typeof parseBackupInstance>;
}
