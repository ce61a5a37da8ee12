import type { Stack, State } from './instance-fields.js';

/**
 * Collections: saved filters over the instances (PRODUCT.md "Collections, scripts, campaigns and
 * release channels"). A collection keeps its filter, not its members: what it matches is worked
 * out when asked, so a new instance tagged `web` is in "web" at once.
 */

/**
 * What a collection matches: the instances list's filters (GET /api/instances), each absent one no
 * filter. `tags`: every tag must be on the instance; `host_id`: a host's id, or `none` for the
 * instances no host reports.
 */
export interface CollectionFilter {
  search?: string;
  state?: State;
  stack?: Stack;
  host_id?: number | 'none';
  tags?: string[];
  guest_status?: string;
}

/** GET /api/collections: a collection with `count`, the instances it matches now. */
export interface Collection {
  id: number;
  name: string;
  description: string;
  filter: CollectionFilter;
  count: number;
}

/** A collection as a backup carries it (without its count). */
export type BackupCollection = Omit<Collection, 'count'>;
