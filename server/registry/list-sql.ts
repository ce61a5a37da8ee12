import type { SortKey } from '../contract/registry.js';
import type { ListQuery } from './schema.js';

/** The list's sort keys as SQL over the registry's column names (the table's, or a rebuilt row's). */
export const SORT_COLUMNS: Record<SortKey, string> = {
  name: 'name COLLATE NOCASE',
  vmid: 'vmid',
  created_at: 'created_at',
  updated_at: 'updated_at',
};

/**
 * The list's filters as SQL over the registry's column names, and their parameters: one reading for
 * the registry now and the registry as it was (past.ts), so both filter alike.
 */
export function listFilters(query: ListQuery): { where: string[]; params: Record<string, string> } {
  const where: string[] = [];
  const params: Record<string, string> = {};
  if (query.search) {
    where.push(`(name LIKE @search ESCAPE '\\' OR CAST(vmid AS TEXT) LIKE @search ESCAPE '\\' OR stack LIKE @search ESCAPE '\\')`);
    params.search = `%${query.search.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
  }
  if (query.state) {
    where.push('state = @state');
    params.state = query.state;
  }
  if (query.stack) {
    where.push('stack = @stack');
    params.stack = query.stack;
  }
  // `,a,b,` holds `,a,` exactly when `a` is one of the tags: no LIKE, so `_` in a tag is no wildcard.
  query.tags?.forEach((tag, i) => {
    where.push(`instr(',' || tags || ',', @tag${i}) > 0`);
    params[`tag${i}`] = `,${tag},`;
  });
  return { where, params };
}
