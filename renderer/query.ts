/** The instances view as it lives in the URL, so a view can be bookmarked. Pure; tested in query.test.ts. */
import { SORT_KEYS, STACKS, STATES, TAG, type SortKey, type Stack, type State } from '../server/contract/registry';
import type { CollectionFilter } from '../server/contract/collections';
import { parseAt } from './asOf';

export type Sort = SortKey;

export interface InstanceView {
  search: string;
  state: string;
  stack: string;
  /** A host's id, `none` (instances no host reports), or '' (all). */
  host: string;
  /** Every one must be on the instance (`?tag=a&tag=b`); sorted. */
  tags: string[];
  sort: Sort;
  order: 'asc' | 'desc';
  /** The instant the registry is shown as of (UTC ISO), or '' for now. */
  at: string;
}

const oneOf = (allowed: readonly string[], value: string | null): string => (value !== null && allowed.includes(value) ? value : '');

export function parseView(search: string): InstanceView {
  const params = new URLSearchParams(search);
  const sort = params.get('sort') ?? '';
  return {
    search: params.get('search') ?? '',
    // A state or stack the registry does not have (a stale bookmark, a typo) means all, as the filter shows it.
    state: oneOf(STATES, params.get('state')),
    stack: oneOf(STACKS, params.get('stack')),
    host: /^(none|[1-9][0-9]{0,14})$/.test(params.get('host_id') ?? '') ? params.get('host_id')! : '',
    // A tag that cannot be one (a hand-edited URL) is dropped, as an unknown state is.
    tags: tidyTags(params.getAll('tag')).filter((t) => TAG.test(t)),
    sort: (SORT_KEYS as readonly string[]).includes(sort) ? (sort as Sort) : 'name',
    order: params.get('order') === 'desc' ? 'desc' : 'asc',
    at: parseAt(params.get('at')),
  };
}

/** The query string of a view, leaving defaults out so URLs stay short: "" or "?state=testing&sort=vmid". */
export function viewQuery(view: InstanceView): string {
  const params = new URLSearchParams();
  if (view.search) params.set('search', view.search);
  if (view.state) params.set('state', view.state);
  if (view.stack) params.set('stack', view.stack);
  if (view.host) params.set('host_id', view.host);
  for (const tag of view.tags) params.append('tag', tag);
  if (view.sort !== 'name') params.set('sort', view.sort);
  if (view.order === 'desc') params.set('order', 'desc');
  if (view.at) params.set('at', view.at);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** Clicking a column: the same column flips the order, another column sorts ascending by it. */
export function toggleSort(view: InstanceView, sort: Sort): InstanceView {
  if (view.sort === sort) return { ...view, order: view.order === 'asc' ? 'desc' : 'asc' };
  return { ...view, sort, order: 'asc' };
}

/** Which rows of a fixed-height list are worth rendering for a scroll position (with overscan). */
export function visibleRange(scrollTop: number, viewport: number, rowHeight: number, total: number, overscan = 8) {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(total, Math.ceil((scrollTop + viewport) / rowHeight) + overscan);
  return { first, last: Math.max(first, last) };
}

/** Tags as the server keeps them: lower-cased, each once, sorted. */
export function tidyTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((t) => t.trim().toLowerCase()).filter(Boolean))].sort();
}

/** Tags typed into one box, separated by commas or spaces: `{tags}` tidied, and `invalid` those that cannot be tags. */
export function parseTagText(text: string): { tags: string[]; invalid: string[] } {
  const tags = tidyTags(text.split(/[\s,]+/));
  return { tags, invalid: tags.filter((t) => !TAG.test(t)) };
}

/** The view with this tag added to its filter (a chip was clicked); the same view when it is there already. */
export function withTag(view: InstanceView, tag: string): InstanceView {
  return view.tags.includes(tag) ? view : { ...view, tags: tidyTags([...view.tags, tag]) };
}

/** The view's filters as a collection keeps them ("Save as collection"): only the filters that are set. */
export function collectionFilter(view: InstanceView): CollectionFilter {
  const filter: CollectionFilter = {};
  if (view.search.trim()) filter.search = view.search.trim();
  if (view.state) filter.state = view.state as State;
  if (view.stack) filter.stack = view.stack as Stack;
  if (view.host) filter.host_id = view.host === 'none' ? 'none' : Number(view.host);
  if (view.tags.length) filter.tags = view.tags;
  return filter;
}

/** A collection's filter in words, for its list: "tags web, edge · state deployed". */
export function filterWords(filter: CollectionFilter): string {
  const words: string[] = [];
  if (filter.tags?.length) words.push(`${filter.tags.length > 1 ? 'tags' : 'tag'} ${filter.tags.join(', ')}`);
  if (filter.search) words.push(`“${filter.search}”`);
  if (filter.state) words.push(`state ${filter.state}`);
  if (filter.stack) words.push(`stack ${filter.stack}`);
  if (filter.host_id !== undefined) words.push(filter.host_id === 'none' ? 'on no host' : `host ${filter.host_id}`);
  if (filter.guest_status) words.push(`guest ${filter.guest_status}`);
  return words.length ? words.join(' · ') : 'every instance';
}

/** The instances page showing what a filter matches (guest_status has no place in that page's filters and is left out). */
export function filterQuery(filter: CollectionFilter): string {
  return viewQuery({
    search: filter.search ?? '',
    state: filter.state ?? '',
    stack: filter.stack ?? '',
    host: filter.host_id === undefined ? '' : String(filter.host_id),
    tags: filter.tags ?? [],
    sort: 'name',
    order: 'asc',
    at: '',
  });
}
