import * as z from 'zod';

/** Minutes between scheduled runs: at most a week. */
export const MAX_SCHEDULE = 10_080;

/**
 * PUT /api/jobs/:id: omitted fields are unchanged, unknown top-level fields ignored; `config` is merged
 * over the stored one (`**REDACTED**` keeps a stored secret, null removes a field). A stored secret is
 * kept only while `api_url` stays: an update that changes it must type the secret again, else 400
 * naming it. Answers the JobView.
 */
export const JobUpdate = z.lazy(() =>
  z.object(
    {
      enabled: z.boolean({ error: 'must be true or false' }).optional(),
      schedule: z
        .int({ error: `must be an integer from 1 to ${MAX_SCHEDULE}` })
        .min(1, { error: `must be an integer from 1 to ${MAX_SCHEDULE}` })
        .max(MAX_SCHEDULE, { error: `must be an integer from 1 to ${MAX_SCHEDULE}` })
        .optional(),
      config: z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }).optional(),
    },
    { error: 'must be a JSON object' },
  ),
);
export type JobUpdate = z.output<typeof JobUpdate>;

/** POST /api/jobs/:id/run: `dry_run=true` previews the changes and writes nothing. */
export const RunQuery = z.lazy(() =>
  z.object({
    dry_run: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().describe('`true`: answer what a run would change, writing nothing'),
  }),
);
export type RunQuery = z.output<typeof RunQuery>;
