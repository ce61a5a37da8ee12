import * as z from 'zod';
import { FLAGS, MAX_TAGS, SORT_KEYS, STACKS, STATES, TAG, TAG_RULE } from '../instance-fields.js';
import { shared } from './parts.js';

const required = (message: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : message;

const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
/** Dotted-quad IPv4 without leading zeros (which some parsers read as octal). */
export const IPV4 = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);

const flag = shared(() => z.union([z.literal(0), z.literal(1)], { error: 'must be 0 or 1' }));

/** One tag as a person writes it: lower-cased, then held to the pattern. */
export const tag = shared(() => z.string({ error: TAG_RULE }).toLowerCase().regex(TAG, { error: TAG_RULE }));

/**
 * An instance's tags: 0–16, lower-cased, deduplicated, sorted. The list is counted before its items
 * are read, so a body of 100,000 items is refused for its length, not checked item by item; it is
 * counted again once duplicates are gone (`["Web", "web"]` is one tag).
 */
export const tagList = shared(() =>
  z
    .array(z.unknown(), { error: 'must be a list of tags' })
    .max(MAX_TAGS * 4, { error: `must hold at most ${MAX_TAGS} tags` })
    .pipe(z.array(tag()))
    .transform((tags) => [...new Set(tags)].sort())
    .refine((tags) => tags.length <= MAX_TAGS, { error: `must hold at most ${MAX_TAGS} tags` }),
);

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
      tags: tagList().default([]),
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
      tags: tagList().optional(),
    },
    { error: 'must be a JSON object' },
  ),
);
export type InstanceUpdate = z.output<typeof InstanceUpdate>;

const AT = 'an ISO 8601 instant with its zone (2026-11-22T10:15:00Z): the registry as it was then, rebuilt from history; a future one is now';

// A repeated parameter is a list; the first one counts.
const queryText = shared(() => z.union([z.string(), z.array(z.string())]));

/**
 * GET /api/instances?search=&state=&stack=&host_id=&tag=&guest_status=&sort=&order=&at=: forgiving by rule, an unknown `sort` is
 * `name`, only `order=desc` is descending, and an empty filter is no filter. `host_id` is a host's id,
 * or `none` for the instances no host reports. `tag` may repeat: every tag given must be on the
 * instance. `at` asks for the registry as it was then (an `at` that is no instant is refused, and so
 * are `host_id` and `guest_status` beside it). The server reads it with parseListQuery (server/registry/schema.ts).
 */
export const InstanceListParams = z.lazy(() =>
  z.object({
    search: queryText().optional(),
    state: queryText().optional(),
    stack: queryText().optional(),
    host_id: queryText().optional().describe('a host id, or `none`'),
    tag: queryText().optional().describe('a tag; repeated, every one must match'),
    guest_status: queryText().optional().describe("the guest's status as its host reports it (`running`, `stopped`, …)"),
    sort: queryText().optional().describe(SORT_KEYS.join(', ')),
    order: queryText().optional().describe('`desc` for descending'),
    at: queryText().optional().describe(AT),
  }),
);
export type InstanceListParams = z.output<typeof InstanceListParams>;

/** GET /api/instances/:vmid?at=: the instance that had this vmid at that instant. */
export const InstanceAtParams = z.lazy(() => z.object({ at: queryText().optional().describe(AT) }));
export type InstanceAtParams = z.output<typeof InstanceAtParams>;

/** At most this many instances in one bulk edit. */
export const MAX_BULK = 1000;

const tagChanges = shared(() =>
  z
    .array(z.unknown(), { error: 'must be a list of tags' })
    .max(MAX_TAGS, { error: `must hold at most ${MAX_TAGS} tags` })
    .pipe(z.array(tag()))
    .transform((tags) => [...new Set(tags)].sort()),
);

/**
 * POST /api/instances/bulk: the same change to many instances, in one transaction. `set` takes the
 * state, the stack and the flags (other fields are ignored, as in any body); tags are added and
 * removed, each instance keeping the others it has.
 */
export const BulkEdit = z.lazy(() =>
  z
    .object(
      {
        vmids: z
          .array(z.unknown(), { error: 'must be a list of vmids' })
          .min(1, { error: 'must list at least one vmid' })
          .max(MAX_BULK, { error: `must list at most ${MAX_BULK} vmids` })
          .pipe(z.array(fields().vmid)),
        set: z
          .object(
            {
              state: fields().state.optional(),
              stack: fields().stack.optional(),
              ...Object.fromEntries(FLAGS.map((f) => [f, flag().optional()])) as Record<(typeof FLAGS)[number], z.ZodOptional<ReturnType<typeof flag>>>,
            },
            { error: 'must be a JSON object' },
          )
          .optional(),
        add_tags: tagChanges().optional(),
        remove_tags: tagChanges().optional(),
      },
      { error: 'must be a JSON object' },
    )
    .superRefine((edit, ctx) => {
      const sets = Object.values(edit.set ?? {}).some((v) => v !== undefined);
      if (!sets && !edit.add_tags?.length && !edit.remove_tags?.length) {
        ctx.addIssue({ code: 'custom', path: ['set'], message: 'nothing to change: give set, add_tags or remove_tags' });
      }
      const both = edit.add_tags?.find((t) => edit.remove_tags?.includes(t));
      if (both) ctx.addIssue({ code: 'custom', path: ['remove_tags'], message: `“${both}” is also in add_tags` });
    }),
);
export type BulkEdit = z.output<typeof BulkEdit>;
