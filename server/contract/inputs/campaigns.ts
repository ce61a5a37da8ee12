import * as z from 'zod';
import { GuestActionBody } from './operations.js';
import { shared } from './parts.js';

/** The most targets one campaign freezes: 100 hosts of 50 guests. */
export const MAX_CAMPAIGN_TARGETS = 5000;
/** A campaign runs a guest action over many guests; clone and rebuild are one guest's each (a new vmid, a deploy spec). */
export const CAMPAIGN_GUEST_ACTIONS = ['start', 'shutdown', 'stop', 'reboot', 'snapshot', 'rollback', 'destroy'] as const;

const VMID_ERROR = 'must be a guest id from 100 to 999999999';
const vmid = shared(() => z.int({ error: VMID_ERROR }).min(100, { error: VMID_ERROR }).max(999_999_999, { error: VMID_ERROR }));
const id = shared(() => z.int({ error: 'must be a positive integer id' }).positive({ error: 'must be a positive integer id' }));
const VERSION = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;

/** Exactly one of `{collection_id}`, `{vmids}`, `{host_ids}`. */
const Target = shared(() =>
  z
    .strictObject(
      {
        collection_id: id().optional(),
        vmids: z
          .array(vmid(), { error: 'must be a list of guest ids' })
          .min(1, { error: 'must name at least one guest' })
          .max(1000, { error: 'must name at most 1000 guests' })
          .refine((list) => new Set(list).size === list.length, { error: 'must name each guest once' })
          .optional(),
        host_ids: z
          .array(id(), { error: 'must be a list of host ids' })
          .min(1, { error: 'must name at least one host' })
          .max(100, { error: 'must name at most 100 hosts' })
          .refine((list) => new Set(list).size === list.length, { error: 'must name each host once' })
          .optional(),
      },
      { error: 'must be {collection_id}, {vmids} or {host_ids}' },
    )
    .refine((t) => [t.collection_id, t.vmids, t.host_ids].filter((v) => v !== undefined).length === 1, { error: 'must be exactly one of {collection_id}, {vmids} or {host_ids}' }),
);

/**
 * `{type: "guest.action", action, …the action's fields}`: the fields are read as the guest action
 * route reads them (GuestActionBody), so a campaign's reboot is held to the same rules as one guest's.
 */
const GuestActionStep = shared(() =>
  z
    .object({ type: z.literal('guest.action'), action: z.enum(CAMPAIGN_GUEST_ACTIONS, { error: `must be one of ${CAMPAIGN_GUEST_ACTIONS.join(', ')} (clone and rebuild are one guest's)` }) })
    .catchall(z.unknown())
    .transform((step, ctx) => {
      const { type, ...fields } = step;
      const parsed = GuestActionBody.safeParse(fields);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
        return z.NEVER;
      }
      return { type, ...(parsed.data as Extract<typeof parsed.data, { action: (typeof CAMPAIGN_GUEST_ACTIONS)[number] }>) };
    }),
);

const Step = shared(() =>
  z.discriminatedUnion(
    'type',
    [
      GuestActionStep(),
      z.object({
        type: z.literal('script'),
        script_id: id(),
        timeout_s: z.int({ error: 'must be whole seconds from 1 to 3600' }).min(1, { error: 'must be whole seconds from 1 to 3600' }).max(3600, { error: 'must be whole seconds from 1 to 3600' }).optional(),
      }),
      z.object({
        type: z.literal('agent.upgrade'),
        version: z.string({ error: 'must be an agent version' }).regex(VERSION, { error: 'must be an agent version such as 1.4.0' }).optional(),
      }),
    ],
    { error: (issue) => (issue.code === 'invalid_union' ? 'must have a type: guest.action, script or agent.upgrade' : issue.code === 'invalid_type' && issue.path?.length === 0 ? 'must be an object {type, …}' : undefined) },
  ),
);

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** POST /api/campaigns (PRODUCT.md "Collections, scripts, campaigns and release channels"). */
export const CampaignBody = z.lazy(() =>
  z.object(
    {
      name: z
        .string({ error: 'must be a name' })
        .trim()
        .min(1, { error: 'must not be empty' })
        .max(100, { error: 'must be at most 100 characters' })
        .refine((v) => !CONTROL.test(v), { error: 'must not contain control characters' }),
      target: Target(),
      step: Step(),
      wave_size: z.int({ error: 'must be a whole number from 1 to 100' }).min(1, { error: 'must be a whole number from 1 to 100' }).max(100, { error: 'must be a whole number from 1 to 100' }).default(1),
      pause_s: z.int({ error: 'must be whole seconds from 0 to 3600' }).min(0, { error: 'must be whole seconds from 0 to 3600' }).max(3600, { error: 'must be whole seconds from 0 to 3600' }).default(0),
      max_failures: z.int({ error: 'must be a whole number from 0' }).min(0, { error: 'must be a whole number from 0' }).max(MAX_CAMPAIGN_TARGETS, { error: `must be at most ${MAX_CAMPAIGN_TARGETS}` }).default(0),
      respect_maintenance: z.boolean({ error: 'must be true or false' }).default(true),
      window_wait_h: z.number({ error: 'must be hours from 0 to 720' }).min(0, { error: 'must be hours from 0 to 720' }).max(720, { error: 'must be hours from 0 to 720' }).default(24),
    },
    { error: 'must be a JSON object' },
  ),
);
/** As the server reads it (defaults applied, the step's fields parsed). */
export type CampaignRequest = z.output<typeof CampaignBody>;
export type CampaignStep = CampaignRequest['step'];
export type CampaignTargetSpec = CampaignRequest['target'];

/** `?dry_run=true`: the waves and what would be skipped, and nothing queued. */
export const CampaignCreateQuery = z.lazy(() =>
  z.object({ dry_run: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().describe('`true`: answer the waves and the skipped targets, queuing nothing') }),
);
export type CampaignCreateQuery = z.output<typeof CampaignCreateQuery>;
