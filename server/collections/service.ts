import { nameOf, type AuditChange, type AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { BackupCollection, Collection, CollectionFilter } from '../contract/collections.js';
import type { CollectionInput } from '../contract/inputs/collections.js';
import type { PlacedInstance } from '../contract/registry.js';
import { conflict, notFound } from '../errors.js';
import { createCollectionRepo } from './repo.js';

/** What collections read of the registry, handed in by server/services.ts: the instances a filter matches now. */
export interface MatchingInstances {
  matching(filter: CollectionFilter): PlacedInstance[];
}

const NAME_TAKEN = 'a collection of that name already exists';
const subject = (c: { id: number; name: string }) => ({ type: 'collection', id: String(c.id), name: c.name });

/** Field by field for the change log; the filter as its JSON text. */
function changesOf(before: Partial<Omit<BackupCollection, 'id'>>, after: Omit<BackupCollection, 'id'>): AuditChange[] {
  const text = (c: Partial<Omit<BackupCollection, 'id'>>) => ({ name: c.name, description: c.description, filter: c.filter && JSON.stringify(c.filter) });
  const [b, a] = [text(before), text(after)];
  return (['name', 'description', 'filter'] as const).filter((f) => b[f] !== a[f]).map((f) => ({ field: f, before: b[f] ?? null, after: a[f] ?? null }));
}

export type Collections = ReturnType<typeof createCollections>;

/**
 * Collections: saved filters over the instances (PRODUCT.md "Collections, scripts, campaigns and
 * release channels"). A collection holds no members: its count and instances are what its filter
 * matches when asked, through the registry's own list. Names are unique whatever their case.
 */
export function createCollections(ctx: Pick<AppContext, 'db' | 'transaction'>, audit: AuditLog, instances: MatchingInstances) {
  const repo = createCollectionRepo(ctx.db);
  const withCount = (c: BackupCollection): Collection => ({ ...c, count: instances.matching(c.filter).length });
  function require(id: number): BackupCollection {
    const found = repo.get(id);
    if (!found) throw notFound('collection not found');
    return found;
  }
  /** The name's UNIQUE index (NOCASE) decides between parallel writes. */
  function unique<T>(write: () => T): T {
    try {
      return write();
    } catch (err) {
      if ((err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict(NAME_TAKEN);
      throw err;
    }
  }

  const createTx = ctx.transaction((input: CollectionInput): Collection => {
    const id = unique(() => repo.insert(input));
    audit.write({ action: 'collection.create', subject: subject({ id, name: input.name }), summary: `${nameOf()} added collection “${input.name}”`, changes: changesOf({}, input) });
    return withCount({ id, ...input });
  });

  const updateTx = ctx.transaction((id: number, input: CollectionInput): Collection => {
    const before = require(id);
    unique(() => repo.update({ id, ...input }));
    audit.write({ action: 'collection.update', subject: subject({ id, name: input.name }), summary: `${nameOf()} changed collection “${input.name}”`, changes: changesOf(before, input) });
    return withCount({ id, ...input });
  });

  const removeTx = ctx.transaction((id: number): void => {
    const before = require(id);
    repo.remove(id);
    audit.write({ action: 'collection.delete', subject: subject(before), summary: `${nameOf()} deleted collection “${before.name}”` });
  });

  return {
    list: (): Collection[] => repo.all().map(withCount),
    read: (id: number): Collection => withCount(require(id)),
    create: (input: CollectionInput): Collection => createTx(input),
    update: (id: number, input: CollectionInput): Collection => updateTx(id, input),
    remove: (id: number): void => removeTx(id),
    /** GET /api/collections/:id/instances: what it matches now, by name. */
    instancesOf: (id: number): PlacedInstance[] => instances.matching(require(id).filter),
    /** The vmids the collection matches now, ascending (campaigns freeze their targets from it); 404 when there is no such collection. */
    vmidsOf: (id: number): number[] => instances.matching(require(id).filter).map((i) => i.vmid).sort((a, b) => a - b),
  };
}
