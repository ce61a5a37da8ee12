import * as z from 'zod';
import type * as wire from '../contract/usage.js';
import { shared } from '../http/validate.js';

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

/** Part B's start report; texts the script could not fill in arrive as "". */
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
// The wire types are written once, in server/contract; the schemas are checked against them.
export type UsageStart = wire.UsageStart;

/** Part B's status update, with its defaults. */
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
export type UsageUpdate = wire.UsageUpdate;

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;
