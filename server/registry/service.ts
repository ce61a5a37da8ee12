import { nameOf, type AuditChange, type AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import { conflict, HttpError, notFound, unprocessable, validationFailed, type FieldError } from '../errors.js';
import { actorName, currentContext } from '../http/request-context.js';
import { isPlainObject, parseWith } from '../http/validate.js';
import { isoMillis, isoSeconds } from '../time.js';
import { nextTurn } from '../tasks.js';
import { createInstanceRepo, joinTags, type Placement, type Placements, type StoredInstance, type TailnetFacts } from './repo.js';
import type { HistoryEntry, Instance, InstanceDetail, ListedInstance, PlacedInstance } from '../contract/registry.js';
import { createDeploySpecs } from './deploy-specs.js';
import { createPastRepo } from './past.js';
import type { DeployFields } from '../contract/provisioning.js';
import type { CollectionFilter } from '../contract/collections.js';
import { InstanceInput, type BulkEdit } from '../contract/inputs/registry.js';
import { WRITABLE_FIELDS, type ListQuery, type WritableField } from './schema.js';
import { FLAGS } from '../contract/registry.js';

const NUMERIC: ReadonlySet<string> = new Set(['vmid', ...FLAGS]);
/** A history value as the change log shows it: the number a numeric field held, else the text. */
const typed = (field: string, value: string | null): unknown => (value !== null && NUMERIC.has(field) ? Number(value) : value);
/** A field's value as history keeps it: tags comma-joined ("" for none), anything else as text. */
const historyText = (field: WritableField, value: unknown): string => (field === 'tags' ? joinTags(value as string[]) : String(value));
const same = (field: WritableField, a: unknown, b: unknown): boolean => (field === 'tags' ? joinTags(a as string[]) === joinTags(b as string[]) : a === b);

export type InstanceService = ReturnType<typeof createInstanceService>;

/** An update worked out before it is stored: the instance as it was read, what it becomes, and the fields that change. */
interface Plan {
  current: StoredInstance;
  next: InstanceInput;
  changed: WritableField[];
}

/** Instances a bulk edit reads and validates in one turn of the event loop. */
const BULK_SLICE = 100;

export interface UpdateResult {
  instance: PlacedInstance;
  changed: string[];
}

const present = ({ id: _id, ...instance }: StoredInstance): Instance => instance;

const NOWHERE: Placements = new Map();
export type { Placement, Placements, TailnetFacts };

/**
 * The registry's rules: create, merge-and-validate updates, per-field history, the
 * production delete guard. Sync jobs, agents and the API all change instances through here.
 *
 * Each change is one change log entry (server/audit.ts), written inside the transaction that holds
 * it; its field changes are the instance's history rows, written once, here, each naming the entry.
 * Who acted comes from the work's context: a request's person, a host's agent, a sync job.
 */
export function createInstanceService({ db, clock, bus, transaction }: Pick<AppContext, 'db' | 'clock' | 'bus' | 'transaction'>, audit: AuditLog) {
  const repo = createInstanceRepo(db);
  const deploySpecs = createDeploySpecs(db);
  const past = createPastRepo(db);
  /** An `at` not before now asks for the registry now (PRODUCT.md: "the registry as it was at that instant"; a future one is not known yet). */
  const inPast = (at: number | undefined): at is number => at !== undefined && at < clock.now();
  /** Where each instance's guest runs: handed in by the composition root from hosts, which knows it. */
  let placements: () => Placements = () => NOWHERE;
  const place = (instance: Instance): PlacedInstance => {
    const p = placements().get(instance.vmid);
    return { ...instance, host: p?.host ?? null, guest_status: p?.guest_status ?? null, tailscale_ipv6: repo.tailscaleIpv6(instance.vmid) };
  };
  audit.keepChangesWith('instance', (ids) => {
    const found = new Map<number, AuditChange[]>();
    for (const row of repo.changesOf(ids)) {
      const list = found.get(row.change_id) ?? [];
      list.push({ field: row.field, before: typed(row.field, row.old_value), after: typed(row.field, row.new_value) });
      found.set(row.change_id, list);
    }
    return found;
  });
  /**
   * The change log entry of a change: `request` when a request made it, else `instance.<verb>` (a
   * job's run). The subject is the instance as it is now; the summary names the changed fields.
   */
  const record = ({ vmid, name }: Pick<Instance, 'vmid' | 'name'>, verb: 'created' | 'changed' | 'saved' | 'deleted' | 'rebuilt', fields?: readonly string[]): number => {
    const fieldWords = fields === undefined ? '' : fields.length ? `: ${fields.join(', ')}` : ' without changes';
    return audit.write({
      action: currentContext().request ? 'request' : `instance.${verb}`,
      subject: { type: 'instance', id: String(vmid), name },
      summary: `${nameOf()} ${verb} instance ${vmid} “${name}”${fieldWords}`,
      ...(fields ? { detail: { fields } } : {}),
    });
  };

  function require(vmid: number): StoredInstance {
    const found = repo.findByVmid(vmid);
    if (!found) throw notFound('instance not found');
    return found;
  }

  const createTx = transaction((input: InstanceInput, now: number) => {
    const at = isoSeconds(now);
    // The vmid's UNIQUE index is the check: one lookup fewer than asking first, and no window between the two.
    let id: number;
    try {
      id = repo.insert(input, at);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('vmid already exists');
      throw err;
    }
    repo.addHistory(id, 'created', null, null, isoMillis(now), actorName(currentContext().actor), record(input, 'created'));
    // What was just stored, without reading it back: the validated input (in column order) and its times.
    const instance = place({ ...input, created_at: at, updated_at: at });
    bus.publish('instance.created', { instance });
    return instance;
  });

  /** What an update makes of `current`: the patch merged over it and validated, and the fields that change. Reads and writes nothing. */
  function plan(current: StoredInstance, patch: Record<string, unknown>): Plan {
    const merged: Record<string, unknown> = {};
    for (const field of WRITABLE_FIELDS) merged[field] = field in patch ? patch[field] : current[field];
    const next = parseWith(InstanceInput, merged);
    return { current, next, changed: WRITABLE_FIELDS.filter((field) => !same(field, next[field], current[field])) };
  }

  /**
   * Stores a planned update, inside a transaction its caller holds, on the instance as `plan.current`
   * read it in that transaction. `quiet`: a save that changes nothing is not recorded (a bulk edit's
   * instances that already were as asked).
   */
  function store({ current, next, changed }: Plan, now: number, facts: TailnetFacts | undefined, quiet = false): UpdateResult {
    if (next.vmid !== current.vmid && repo.findByVmid(next.vmid)) throw conflict('vmid already exists');
    // Kept before the instance is announced below, which reads them; never in history or `changed`.
    const learnt = facts ? repo.setTailnet(current.vmid, facts) : false;
    if (changed.length === 0) {
      // A person's save without changes is recorded as such; a job's or an agent's is no change at all.
      if (!quiet && currentContext().request && currentContext().actor.type !== 'agent') record(next, 'saved', changed);
      const instance = place(present(current));
      if (learnt) bus.publish('instance.updated', { instance, changed: ['tailscale_ipv6'], previous_vmid: current.vmid });
      return { instance, changed };
    }
    const updatedAt = isoSeconds(now);
    repo.update(current.id, next, changed, updatedAt);
    const at = isoMillis(now);
    const changeId = record(next, 'changed', changed);
    const by = actorName(currentContext().actor);
    for (const field of changed) repo.addHistory(current.id, field, historyText(field, current[field]), historyText(field, next[field]), at, by, changeId);
    // What was just stored, without reading it back (as a create): the validated input and its times.
    const instance = place({ ...next, created_at: current.created_at, updated_at: updatedAt });
    bus.publish('instance.updated', { instance, changed: learnt ? [...changed, 'tailscale_ipv6'] : changed, previous_vmid: current.vmid });
    return { instance, changed };
  }
  const updateTx = transaction((vmid: number, patch: Record<string, unknown>, now: number, facts: TailnetFacts | undefined) =>
    store(plan(require(vmid), patch), now, facts),
  );

  /** A bulk edit's change to one instance, planned; a result that is not valid is a 400 naming the vmid and field. */
  function planBulk(edit: BulkEdit, current: StoredInstance): Plan {
    const patch: Record<string, unknown> = { ...edit.set };
    if (edit.add_tags || edit.remove_tags) {
      patch.tags = [...current.tags.filter((t) => !edit.remove_tags?.includes(t)), ...(edit.add_tags ?? [])];
    }
    try {
      return plan(current, patch);
    } catch (err) {
      if (err instanceof HttpError && Array.isArray(err.body.errors)) {
        throw validationFailed((err.body.errors as FieldError[]).map((e) => ({ field: e.field, vmid: current.vmid, message: `vmid ${current.vmid}: ${e.message}` })));
      }
      throw err;
    }
  }
  const noSuchInstance = (vmid: number) => validationFailed([{ field: 'vmids', vmid, message: `vmid ${vmid}: no such instance` }]);
  const unchangedSince = (read: StoredInstance, now: StoredInstance): boolean => read.id === now.id && WRITABLE_FIELDS.every((f) => same(f, read[f], now[f]));

  /**
   * "One transaction, all or nothing (any invalid result → 400 naming the vmid and field), one history
   * entry per changed field". The plans were made before, a slice per turn of the event loop; this
   * reads every instance again in one statement and plans anew each that another write changed since
   * (or refuses one deleted since), so it stores only what its own transaction read. Each instance goes
   * through the one update path, so its history and change log entry are an edit's; the first that
   * cannot take the change undoes them all.
   */
  const bulkTx = transaction((edit: BulkEdit, planned: ReadonlyMap<number, Plan>, now: number): number => {
    const rows = repo.findMany([...planned.keys()]);
    let updated = 0;
    for (const [vmid, before] of planned) {
      const current = rows.get(vmid);
      if (!current) throw noSuchInstance(vmid);
      const planNow = unchangedSince(before.current, current) ? { ...before, current } : planBulk(edit, current);
      if (store(planNow, now, undefined, true).changed.length) updated++;
    }
    return updated;
  });

  /** The turn the last bulk edit stores in: the next one stores a turn later. */
  let storing: Promise<void> = Promise.resolve();
  /**
   * A bulk edit: up to MAX_BULK instances read and validated a slice per turn of the event loop (the
   * validation of 1,000 was a sixth of the edit's time), then stored in one transaction, in a turn of
   * its own.
   */
  async function bulkEdit(edit: BulkEdit): Promise<{ updated: number }> {
    const vmids = [...new Set(edit.vmids)];
    const planned = new Map<number, Plan>();
    for (let start = 0; start < vmids.length; start += BULK_SLICE) {
      if (start > 0) await nextTurn();
      const slice = vmids.slice(start, start + BULK_SLICE);
      const rows = repo.findMany(slice);
      for (const vmid of slice) {
        const current = rows.get(vmid);
        if (!current) throw noSuchInstance(vmid);
        planned.set(vmid, planBulk(edit, current));
      }
    }
    // One edit's transaction per turn: edits planned at the same time do not hold the loop one after another.
    const turn = storing.then(nextTurn);
    storing = turn;
    await turn;
    return { updated: bulkTx(edit, planned, clock.now()) };
  }

  const removeTx = transaction((vmid: number): void => {
    const instance = require(vmid);
    if (instance.stack === 'production') {
      throw unprocessable('production instances cannot be deleted; change the stack to development first');
    }
    past.keepDeleted(instance.id, clock.now());
    repo.remove(instance.id);
    record(instance, 'deleted');
    bus.publish('instance.deleted', { vmid });
  });

  const rebuiltTx = transaction((vmid: number, source: string, now: number): void => {
    const instance = require(vmid);
    repo.addHistory(instance.id, 'rebuilt', null, source, isoMillis(now), actorName(currentContext().actor), record(instance, 'rebuilt'));
  });

  return {
    /** GET /api/instances; with `at` in the past, the registry as it was then. */
    list: (query: ListQuery): ListedInstance[] => (inPast(query.at) ? past.list(query.at, query) : repo.list(query, placements())),
    /** What a collection's filter matches now, by name, as GET /api/instances with the same filters would list it. */
    matching: (filter: CollectionFilter): PlacedInstance[] =>
      repo.list(
        { search: filter.search, state: filter.state, stack: filter.stack, host: filter.host_id, tags: filter.tags, guestStatus: filter.guest_status, sort: 'name', descending: false },
        placements(),
      ),
    stacks: () => repo.stacks(),
    /**
     * Every instance by vmid, read a page per turn of the event loop: 200,000 of them are a third of
     * a second in one piece. Not one snapshot: a change made between pages may or may not be in it.
     */
    async listInPages(pageSize = 5_000): Promise<PlacedInstance[]> {
      const all: PlacedInstance[] = [];
      for (let page = repo.pageAfter(0, pageSize, placements()); page.length > 0; page = repo.pageAfter(page.at(-1)!.vmid, pageSize, placements())) {
        all.push(...page);
        await nextTurn();
      }
      return all;
    },
    get: (vmid: number): PlacedInstance => place(present(require(vmid))),
    /** GET /api/instances/:vmid: the instance and how homefleet deployed its guest. */
    detail(vmid: number, at?: number): InstanceDetail {
      if (!inPast(at)) return { ...place(present(require(vmid))), deploy: deploySpecs.get(vmid) };
      const then = past.one(at, vmid);
      if (!then) throw notFound('no instance had this vmid then');
      return { ...then, deploy: null };
    },
    /** The deploy spec of an instance, or null. */
    deploySpec: (vmid: number) => deploySpecs.get(vmid),
    /** An instance with this vmid is registered. */
    exists: (vmid: number): boolean => repo.findByVmid(vmid) !== undefined,
    /** Keeps how the instance's guest was deployed (inside the transaction of the deploy or rebuild). */
    keepDeploySpec: (vmid: number, fields: DeployFields, now: number, by: string): void => {
      if (!deploySpecs.keep(vmid, fields, isoSeconds(now), by)) throw notFound('instance not found');
    },
    /** A rebuild re-made the instance's guest: one `rebuilt` history entry (its new value says from what) and its change log entry. */
    rebuilt: (vmid: number, source: string): void => rebuiltTx(vmid, source, clock.now()),
    /** The vmid, name, stack and state of each registered instance among `vmids` (hosts compare their guests with them; alerts read the states). */
    byVmids: (vmids: readonly number[]) => repo.byVmids(vmids),

    /** Where guests run, from hosts (server/services.ts wires it): `host` and `guest_status` of every instance. */
    usePlacements(lookup: () => Placements): void {
      placements = lookup;
    },

    /**
     * Hosts moved these guests (a heartbeat changed what runs where, or its status): each that is an
     * instance is announced on instance.updated, as it reads now. Nothing is written, nothing goes in history.
     */
    placementsChanged(changes: ReadonlyMap<number, string[]>): void {
      for (const [vmid, changed] of changes) {
        const found = repo.findByVmid(vmid);
        if (found) bus.publish('instance.updated', { instance: place(present(found)), changed, previous_vmid: vmid });
      }
    },
    history: (vmid: number): HistoryEntry[] => repo.history(require(vmid).id),

    /** Creates the instance, its `created` history entry and its change log entry in one transaction. */
    create(body: unknown): Instance {
      return createTx(parseWith(InstanceInput, body), clock.now());
    },
    /** The same, for an input the route has already read with InstanceInput (no second parse). */
    createValid: (input: InstanceInput): Instance => createTx(input, clock.now()),

    /**
     * Merges `patch` over the stored instance, validates the result, records each changed field.
     * `facts`, from a sync job only (a request's body never reaches them), are kept in the same transaction.
     */
    update(vmid: number, patch: unknown, facts?: TailnetFacts): UpdateResult {
      if (!isPlainObject(patch)) throw validationFailed([{ field: 'body', message: 'must be a JSON object' }]);
      return updateTx(vmid, patch as Record<string, unknown>, clock.now(), facts);
    },

    /** POST /api/instances/bulk: the number of instances changed. */
    bulkEdit,

    /** Deletes the instance (and its history), with its change log entry in the same transaction. */
    remove(vmid: number): void {
      removeTx(vmid);
    },
  };
}
