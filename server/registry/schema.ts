import * as z from 'zod';
import { FLAGS, MAX_TAGS, SORT_KEYS, TAG, TAG_RULE, type SortKey } from '../contract/registry.js';
import { InstanceAtParams, InstanceListParams } from '../contract/inputs/registry.js';
import { validationFailed } from '../errors.js';
import { INSTANT_RULE, parseInstant } from './instant.js';

/** The writable fields, in the order they are stored, shown and compared for history. */
export const WRITABLE_FIELDS = ['vmid', 'name', 'state', 'stack', 'tailscale_ip', ...FLAGS, 'tags'] as const;
export type WritableField = (typeof WRITABLE_FIELDS)[number];

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
  /** Every one must be on the instance. */
  tags?: string[];
  /** The guest's status as its host reports it. */
  guestStatus?: string;
  sort: SortKey;
  descending: boolean;
  /** `at`: the instant whose registry is asked for (ms), rebuilt from history (past.ts). */
  at?: number;
}

export function parseListQuery(query: Record<string, unknown>): ListQuery {
  const sort = firstString(query.sort);
  const host = firstString(query.host_id);
  // A host filter that names no host cannot be read as "all": that would be another list than asked for.
  if (host && host !== 'none' && !/^[1-9]\d{0,14}$/.test(host)) throw validationFailed([{ field: 'host_id', message: 'must be a host id or none' }]);
  const given = query.tag === undefined ? [] : (Array.isArray(query.tag) ? query.tag : [query.tag]).filter((t): t is string => typeof t === 'string' && t !== '');
  const tags = [...new Set(given.map((t) => t.toLowerCase()))].sort();
  // A tag no instance can carry matches nothing; said plainly, as for host_id.
  if (tags.length > MAX_TAGS) throw validationFailed([{ field: 'tag', message: `must name at most ${MAX_TAGS} tags` }]);
  const bad = tags.find((t) => !TAG.test(t));
  if (bad !== undefined) throw validationFailed([{ field: 'tag', message: TAG_RULE }]);
  const at = parseAt(query.at);
  // Where a guest ran is what hosts report now, never written to history: no past to filter by.
  if (at !== undefined && host) throw validationFailed([{ field: 'host_id', message: 'cannot be combined with at: where guests ran is not kept in history' }]);
  if (at !== undefined && firstString(query.guest_status)) throw validationFailed([{ field: 'guest_status', message: 'cannot be combined with at: guest statuses are not kept in history' }]);
  return {
    ...(at === undefined ? {} : { at }),
    host: host ? (host === 'none' ? 'none' : Number(host)) : undefined,
    ...(tags.length ? { tags } : {}),
    guestStatus: firstString(query.guest_status) || undefined,
    search: firstString(query.search) || undefined,
    state: firstString(query.state) || undefined,
    stack: firstString(query.stack) || undefined,
    sort: SORT_KEYS.includes(sort as SortKey) ? (sort as SortKey) : 'name',
    descending: firstString(query.order) === 'desc',
  };
}

/** `at` read as an instant (ms); absent or empty is now. Not an instant: 400 naming it, never "now" instead. */
function parseAt(value: unknown): number | undefined {
  const text = firstString(value);
  if (!text) return undefined;
  const at = parseInstant(text);
  if (at === null) throw validationFailed([{ field: 'at', message: INSTANT_RULE }]);
  return at;
}

/** GET /api/instances's query, forgiving as parseListQuery says; only a host filter that names no host, and an `at` that is no instant, are refused. */
export const InstanceListQuery = z.lazy(() => InstanceListParams.unwrap().transform((query) => parseListQuery(query)));

/** GET /api/instances/:vmid's query: `at`, as the list reads it. */
export const InstanceAtQuery = z.lazy(() => InstanceAtParams.unwrap().transform((query): { at?: number } => {
  const at = parseAt(query.at);
  return at === undefined ? {} : { at };
}));
