import * as z from 'zod';
import { limitParam, pageQuery } from './page.js';
import { shared } from './parts.js';

/** Bounds of the stored texts; a 16 KiB body could hold more, the table should not. */
export const LIMITS = { shortText: 64, nsapp: 128, status: 32, error: 2000 } as const;

const text = (max: number) =>
  z.string({ error: 'must be a string' }).max(max, { error: `must be at most ${max} characters` });

/** Sizes are numbers, or null when the script had nothing numeric to send. */
const size = shared(() =>
  z
    .number({ error: 'must be a number or null' })
    .nonnegative({ error: 'must not be negative' })
    .max(1e12, { error: 'is too large' })
    .nullable()
    .default(null),
);

const randomId = shared(() =>
  z
    .uuid({ error: 'must be a UUID' })
    .transform((id) => id.toLowerCase()),
);

/** POST /api/usage/upload: part B's start report, as the server reads it (texts the script could not fill in arrive as ""; random_id, a UUID, kept lower case). */
export const UsageStart = z.lazy(() =>
  z.object(
    {
      ct_type: z.int({ error: 'must be an integer or null' }).min(0).max(255).nullable().default(null),
      type: z.enum(['lxc', 'vm'], { error: 'must be lxc or vm' }),
      disk_size: size(),
      core_count: size(),
      ram_size: size(),
      os_type: text(LIMITS.shortText).default(''),
      os_version: text(LIMITS.shortText).default(''),
      disableip6: text(LIMITS.shortText).default(''),
      nsapp: text(LIMITS.nsapp).default(''),
      method: text(LIMITS.shortText).default(''),
      pve_version: text(LIMITS.shortText).default('not found'),
      status: z.literal('installing', { error: 'must be installing' }),
      random_id: randomId(),
    },
    { error: 'must be a JSON object' },
  ),
);
export type UsageStart = z.output<typeof UsageStart>;

/** POST /api/usage/upload/updatestatus: part B's status update (defaults `failed`, "No error message"). */
export const UsageUpdate = z.lazy(() =>
  z.object(
    {
      status: text(LIMITS.status).min(1, { error: 'must not be empty' }).default('failed'),
      error: text(LIMITS.error).default('No error message'),
      random_id: randomId(),
    },
    { error: 'must be a JSON object' },
  ),
);
export type UsageUpdate = z.output<typeof UsageUpdate>;

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;
export const DEFAULT_STATS_DAYS = 90;
export const MAX_STATS_DAYS = 366;

/** GET /api/usage?limit=&before=: pages of 50, at most 500. */
export const UsageListQuery = z.lazy(() => pageQuery(DEFAULT_PAGE, MAX_PAGE));
/** GET /api/usage/stats?days=: the days the charts cover. */
export const UsageStatsQuery = z.lazy(() => z.object({ days: limitParam(DEFAULT_STATS_DAYS, MAX_STATS_DAYS).describe(`Days the charts cover, 1 to ${MAX_STATS_DAYS} (default ${DEFAULT_STATS_DAYS})`) }));
export type UsageStatsQuery = z.input<typeof UsageStatsQuery>;
