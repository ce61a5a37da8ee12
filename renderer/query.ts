/** The instances view as it lives in the URL, so a view can be bookmarked. Pure; tested in query.test.ts. */
import { SORT_KEYS, STACKS, STATES, type SortKey } from '../server/contract/registry';
import { parseAt } from './asOf';

export type Sort = SortKey;

export interface InstanceView {
  search: string;
  state: string;
  stack: string;
  /** A host's id, `none` (instances no host reports), or '' (all). */
  host: string;
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
