import * as z from 'zod';
import { FLAGS, SORT_KEYS, STACKS, STATES, type SortKey } from '../contract/registry.js';
import type * as wire from '../contract/registry.js';
import { shared } from '../http/validate.js';
import { validationFailed } from '../errors.js';

/** The writable fields, in the order they are stored, shown and compared for history. */
export const WRITABLE_FIELDS = ['vmid', 'name', 'state', 'stack', 'tailscale_ip', ...FLAGS] as const;
export type WritableField = (typeof WRITABLE_FIELDS)[number];

const required = (message: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : message;

const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
/** Dotted-quad IPv4 without leading zeros (which some parsers read as octal). */
export const IPV4 = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);

const flag = shared(() => z.union([z.literal(0), z.literal(1)], { error: 'must be 0 or 1' }));

/** The writable fields, each with its rule: `required` says what an absent field is told. */
const fields = shared(() => ({
  vmid: z.int({ error: required('must be a positive integer') }).positive({ error: 'must be a positive integer' }),
  name: z
    .string({ error: required('must be a string') })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(200, { error: 'must be at most 200 characters' }),
  state: z.enum(STATES, { error: required(`must be one of ${STATES.join(', ')}`) }),
  stack: z.enum(STACKS, { error: required(`must be one of ${STACKS.join(', ')}`) }),
  tailscale_ip: z
    .string({ error: 'must be an IPv4 address or empty' })
    .refine((ip) => ip === '' || IPV4.test(ip), { error: 'must be an IPv4 address or empty' }),
}));

/** An instance as written by a client: create bodies, and update bodies once merged. */
export const InstanceInput = z.lazy(() =>
  z.object(
    {
      ...fields(),
      tailscale_ip: fields().tailscale_ip.default(''),
      atlas: flag().default(0),
      argus: flag().default(0),
      semaphore: flag().default(0),
      patchmon: flag().default(0),
      tailscale: flag().default(0),
      andromeda: flag().default(0),
      hardware_acceleration: flag().default(0),
    },
    { error: 'must be a JSON object' },
  ),
);
// The wire type is written once, in server/contract; the route map holds the schema to it.
export type InstanceInput = wire.InstanceInput;

/** PUT /api/instances/:vmid: any of the fields, none filled in (an absent one keeps its stored value). */
export const InstanceUpdate = z.lazy(() =>
  z.object(
    {
      vmid: fields().vmid.optional(),
      name: fields().name.optional(),
      state: fields().state.optional(),
      stack: fields().stack.optional(),
      tailscale_ip: fields().tailscale_ip.optional(),
      ...Object.fromEntries(FLAGS.map((f) => [f, flag().optional()])) as Record<(typeof FLAGS)[number], z.ZodOptional<ReturnType<typeof flag>>>,
    },
    { error: 'must be a JSON object' },
  ),
);

const firstString = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;

/**
 * The list query is forgiving by rule: an unknown `sort` falls back to `name`, and only
 * `order=desc` selects descending. Empty filters are no filter.
 */
/** The list query as the server reads it (see parseListQuery). */
export interface ListQuery {
  search?: string;
  state?: string;
  stack?: string;
  /** A host's id, or `none`: the instances no host reports. */
  host?: number | 'none';
  sort: SortKey;
  descending: boolean;
}

export function parseListQuery(query: Record<string, unknown>): ListQuery {
  const sort = firstString(query.sort);
  const host = firstString(query.host_id);
  // A host filter that names no host cannot be read as "all": that would be another list than asked for.
  if (host && host !== 'none' && !/^[1-9]\d{0,14}$/.test(host)) throw validationFailed([{ field: 'host_id', message: 'must be a host id or none' }]);
  return {
    host: host ? (host === 'none' ? 'none' : Number(host)) : undefined,
    search: firstString(query.search) || undefined,
    state: firstString(query.state) || undefined,
    stack: firstString(query.stack) || undefined,
    sort: SORT_KEYS.includes(sort as SortKey) ? (sort as SortKey) : 'name',
    descending: firstString(query.order) === 'desc',
  };
}

// A repeated parameter is a list; the first one counts.
const queryText = shared(() => z.union([z.string(), z.array(z.string())]));

/** GET /api/instances's query, forgiving as parseListQuery says; only a host filter that names no host is refused. */
export const InstanceListQuery = z.lazy(() =>
  z
    .object({
      search: queryText().optional(),
      state: queryText().optional(),
      stack: queryText().optional(),
      host_id: queryText().optional().describe('a host id, or `none`'),
      sort: queryText().optional().describe(SORT_KEYS.join(', ')),
      order: queryText().optional().describe('`desc` for descending'),
    })
    .transform((query) => parseListQuery(query)),
);
