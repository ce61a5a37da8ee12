import type { AppContext } from '../context.js';
import { conflict, notFound, unprocessable, validationFailed } from '../errors.js';
import type { RequestAudit } from '../http/locals.js';
import { isPlainObject, parseWith } from '../http/validate.js';
import { isoMillis, isoSeconds } from '../time.js';
import { createInstanceRepo, type StoredInstance } from './repo.js';
import { InstanceInput, WRITABLE_FIELDS, type HistoryEntry, type Instance, type ListQuery } from './schema.js';

export type InstanceService = ReturnType<typeof createInstanceService>;

export interface UpdateResult {
  instance: Instance;
  changed: string[];
}

const present = ({ id: _id, ...instance }: StoredInstance): Instance => instance;

/**
 * The registry's rules: create, merge-and-validate updates, per-field history, the
 * production delete guard. Sync jobs and the API both change instances through here.
 * `audit` (the request's audit row, see requestAuditOf) is written inside the transaction that
 * holds the change, so the change and its audit row commit together or not at all.
 */
export function createInstanceService({ db, clock, bus, transaction }: Pick<AppContext, 'db' | 'clock' | 'bus' | 'transaction'>) {
  const repo = createInstanceRepo(db);

  function require(vmid: number): StoredInstance {
    const found = repo.findByVmid(vmid);
    if (!found) throw notFound('instance not found');
    return found;
  }

  const createTx = transaction((input: InstanceInput, now: number, by: string | null, audit: RequestAudit | undefined) => {
    const at = isoSeconds(now);
    // The vmid's UNIQUE index is the check: one lookup fewer than asking first, and no window between the two.
    let id: number;
    try {
      id = repo.insert(input, at);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('vmid already exists');
      throw err;
    }
    repo.addHistory(id, 'created', null, null, isoMillis(now), by);
    audit?.({ target: `instance ${input.vmid}` });
    // What was just stored, without reading it back: the validated input (in column order) and its times.
    const instance: Instance = { ...input, created_at: at, updated_at: at };
    bus.publish('instance.created', { instance });
    return instance;
  });

  const updateTx = transaction(
    (vmid: number, patch: Record<string, unknown>, now: number, by: string | null, audit: RequestAudit | undefined): UpdateResult => {
      const current = require(vmid);
      const merged: Record<string, unknown> = {};
      for (const field of WRITABLE_FIELDS) merged[field] = field in patch ? patch[field] : current[field];
      const next = parseWith(InstanceInput, merged);
      const changed = WRITABLE_FIELDS.filter((field) => next[field] !== current[field]);
      if (next.vmid !== current.vmid && repo.findByVmid(next.vmid)) throw conflict('vmid already exists');
      audit?.({ detail: { fields: changed } });
      if (changed.length === 0) return { instance: present(current), changed };
      repo.update(current.id, next, isoSeconds(now));
      const at = isoMillis(now);
      for (const field of changed) repo.addHistory(current.id, field, String(current[field]), String(next[field]), at, by);
      const instance = present(repo.findByVmid(next.vmid)!);
      bus.publish('instance.updated', { instance, changed, previous_vmid: vmid });
      return { instance, changed };
    },
  );

  const removeTx = transaction((vmid: number, audit: RequestAudit | undefined): void => {
    const instance = require(vmid);
    if (instance.stack === 'production') {
      throw unprocessable('production instances cannot be deleted; change the stack to development first');
    }
    repo.remove(instance.id);
    audit?.();
    bus.publish('instance.deleted', { vmid });
  });

  return {
    list: (query: ListQuery) => repo.list(query),
    stacks: () => repo.stacks(),
    get: (vmid: number): Instance => present(require(vmid)),
    history: (vmid: number): HistoryEntry[] => repo.history(require(vmid).id),

    /** Creates the instance and its `created` history entry in one transaction. `by` is recorded in history. */
    create(body: unknown, by: string | null = null, audit?: RequestAudit): Instance {
      const input = parseWith(InstanceInput, body);
      return createTx(input, clock.now(), by, audit);
    },

    /** Merges `patch` over the stored instance, validates the result, records each changed field. */
    update(vmid: number, patch: unknown, by: string | null = null, audit?: RequestAudit): UpdateResult {
      if (!isPlainObject(patch)) throw validationFailed([{ field: 'body', message: 'must be a JSON object' }]);
      return updateTx(vmid, patch as Record<string, unknown>, clock.now(), by, audit);
    },

    /** Deletes the instance (and its history), with the request's audit row in the same transaction. */
    remove(vmid: number, audit?: RequestAudit): void {
      removeTx(vmid, audit);
    },
  };
}
