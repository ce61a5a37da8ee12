import * as z from 'zod';
import { FLAGS, SORT_KEYS, STACKS, STATES } from '../instance-fields.js';
import { shared } from './parts.js';

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

/**
 * An instance as a client writes it (POST /api/instances), as the server reads it: `tailscale_ip`
 * ("" when absent) and the flags (0 when absent) may be left out of the body. PUT takes any subset
 * (`InstanceUpdate`), merged over the stored instance and then checked whole.
 */
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
export type InstanceInput = z.output<typeof InstanceInput>;

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
export type InstanceUpdate = z.output<typeof InstanceUpdate>;

const AT = 'an ISO 8601 instant with its zone (2026-11-22T10:15:00Z): the registry as it was then, rebuilt from history; a future one is now';

// A repeated parameter is a list; the first one counts.
const queryText = shared(() => z.union([z.string(), z.array(z.string())]));

/**
 * GET /api/instances?search=&state=&stack=&host_id=&sort=&order=&at=: forgiving by rule, an unknown `sort` is
 * `name`, only `order=desc` is descending, and an empty filter is no filter. `host_id` is a host's id,
 * or `none` for the instances no host reports. `at` asks for the registry as it was then (an `at` that
 * is no instant is refused, and so is `host_id` beside it). The server reads it with parseListQuery (server/registry/schema.ts).
 */
export const InstanceListParams = z.lazy(() =>
  z.object({
    search: queryText().optional(),
    state: queryText().optional(),
    stack: queryText().optional(),
    host_id: queryText().optional().describe('a host id, or `none`'),
    sort: queryText().optional().describe(SORT_KEYS.join(', ')),
    order: queryText().optional().describe('`desc` for descending'),
    at: queryText().optional().describe(AT),
  }),
);
export type InstanceListParams = z.output<typeof InstanceListParams>;

/** GET /api/instances/:vmid?at=: the instance that had this vmid at that instant. */
export const InstanceAtParams = z.lazy(() => z.object({ at: queryText().optional().describe(AT) }));
export type InstanceAtParams = z.output<typeof InstanceAtParams>;
