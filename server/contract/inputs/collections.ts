import * as z from 'zod';
import { STACKS, STATES } from '../instance-fields.js';
import { shared } from './parts.js';
import { tagList } from './registry.js';

const FILTER_KEYS = ['search', 'state', 'stack', 'host_id', 'tags', 'guest_status'] as const;

/**
 * A collection's filter, each key held to what the instances list reads (GET /api/instances), and
 * stricter where the list forgives: a state or stack the registry does not have is refused, not
 * read as "matches nothing". An unknown key is refused too: a misspelt `tag` would otherwise make a
 * collection of every instance, and a campaign over it would reach the whole fleet. Empty values are
 * no filter and are dropped.
 */
export const CollectionFilter = shared(() =>
  z
    .unknown()
    .superRefine((value, ctx) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
      for (const key of Object.keys(value)) {
        if (!(FILTER_KEYS as readonly string[]).includes(key)) ctx.addIssue({ code: 'custom', path: [key], message: `is not a filter: use ${FILTER_KEYS.join(', ')}` });
      }
    })
    .pipe(
      z.object(
        {
          search: z.string({ error: 'must be a string' }).trim().max(200, { error: 'must be at most 200 characters' }).optional(),
          state: z.enum(STATES, { error: `must be one of ${STATES.join(', ')}` }).optional(),
          stack: z.enum(STACKS, { error: `must be one of ${STACKS.join(', ')}` }).optional(),
          host_id: z
            .union([z.int().positive().max(Number.MAX_SAFE_INTEGER), z.literal('none')], { error: 'must be a host id or none' })
            .optional(),
          tags: tagList().optional(),
          guest_status: z.string({ error: 'must be a string' }).trim().max(32, { error: 'must be at most 32 characters' }).optional(),
        },
        { error: 'must be a JSON object' },
      ),
    )
    .transform((filter) => {
      const kept: Record<string, unknown> = {};
      for (const key of FILTER_KEYS) {
        const value = filter[key];
        if (value !== undefined && value !== '' && !(Array.isArray(value) && value.length === 0)) kept[key] = value;
      }
      return kept as {
        search?: string;
        state?: (typeof STATES)[number];
        stack?: (typeof STACKS)[number];
        host_id?: number | 'none';
        tags?: string[];
        guest_status?: string;
      };
    }),
);

/** POST /api/collections, PUT /api/collections/:id: the whole collection. */
export const CollectionInput = z.lazy(() =>
  z.object(
    {
      name: z
        .string({ error: 'must be a string' })
        .trim()
        .min(1, { error: 'must not be empty' })
        .max(100, { error: 'must be at most 100 characters' }),
      description: z.string({ error: 'must be a string' }).trim().max(1000, { error: 'must be at most 1000 characters' }).default(''),
      filter: CollectionFilter().default({}),
    },
    { error: 'must be a JSON object' },
  ),
);
export type CollectionInput = z.output<typeof CollectionInput>;

/** A collection row of a backup: its id kept, so what names it (a campaign) still does after a restore. */
export const BackupCollectionRow = z.lazy(() =>
  CollectionInput.unwrap().extend({
    id: z.int({ error: 'must be a positive integer' }).positive({ error: 'must be a positive integer' }),
  }),
);
export type BackupCollectionRow = z.output<typeof BackupCollectionRow>;
