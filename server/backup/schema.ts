import { z } from 'zod';
import { InstanceInput } from '../registry/schema.js';
import { JOB_CONFIG, JOB_KEYS, MAX_SCHEDULE, RUN_STATUSES } from '../jobs/schema.js';

/** The format this release writes; 1 and 2 are read too (2 had no jobs, 1 lacked later instance fields). */
export const BACKUP_VERSION = 3;

const isoTimestamp = z
  .string({ error: 'must be an ISO 8601 UTC timestamp' })
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/, { error: 'must be an ISO 8601 UTC timestamp' });

/**
 * An instance row of a backup: the instance as written by a client (missing flags 0,
 * missing tailscale_ip ""), with its timestamps when the backup has them.
 */
export const BackupInstance = InstanceInput.extend({
  created_at: isoTimestamp.optional(),
  updated_at: isoTimestamp.optional(),
});
export type BackupInstance = z.infer<typeof BackupInstance>;

const flag = z.union([z.literal(0), z.literal(1), z.boolean()], { error: 'must be 0 or 1' }).transform((v) => (v === true || v === 1 ? 1 : 0));

/** A job row with its raw config; run summaries (last_run_at, ...) are ignored. */
export const BackupJob = z
  .object({
    id: z.int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }),
    key: z.enum(JOB_KEYS, { error: `must be one of ${JOB_KEYS.join(', ')}` }),
    name: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }),
    description: z.string({ error: 'must be a string' }).default(''),
    enabled: flag.default(0),
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
  });
export type BackupJob = z.infer<typeof BackupJob>;

export const BackupRun = z.object({
  id: z.int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }),
  job_id: z.int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }),
  started_at: isoTimestamp,
  ended_at: isoTimestamp.nullable().default(null),
  status: z.enum(RUN_STATUSES, { error: `must be one of ${RUN_STATUSES.join(', ')}` }),
  result: z.string({ error: 'must be a string' }).default(''),
});
export type BackupRun = z.infer<typeof BackupRun>;
