import type { AuditChange } from '../audit.js';
import type { Instance } from '../contract/registry.js';
import type { Change } from './handlers/types.js';
import { SECRET_FIELDS, type FieldChange } from '../contract/jobs.js';
import { parseStoredConfig, type JobRow } from './schema.js';

/** A config value as it acts: "" (a text not set) and false (run_on_create off) mean the same as absent. */
const effective = (value: unknown) => (value === '' || value === false || value === null ? undefined : value);

/**
 * What a job update really changed: a value sent again as it was stored (or as it acts) is not a
 * change. A secret field is named without its values.
 */
export function jobChanges(before: JobRow, after: JobRow): AuditChange[] {
  const changes: AuditChange[] = [];
  if (before.enabled !== after.enabled) changes.push({ field: 'enabled', before: before.enabled === 1, after: after.enabled === 1 });
  if (before.schedule !== after.schedule) changes.push({ field: 'schedule', before: before.schedule, after: after.schedule });
  const was = parseStoredConfig(before.config);
  const now = parseStoredConfig(after.config);
  for (const field of new Set([...Object.keys(was), ...Object.keys(now)])) {
    if (JSON.stringify(effective(was[field])) === JSON.stringify(effective(now[field]))) continue;
    const secret = (SECRET_FIELDS as readonly string[]).includes(field);
    changes.push(secret ? { field: `config.${field}` } : { field: `config.${field}`, before: was[field] ?? null, after: now[field] ?? null });
  }
  return changes;
}

export const jobSubject = (job: Pick<JobRow, 'id' | 'name'>) => ({ type: 'job', id: String(job.id), name: job.name });

/** A handler's wanted values against the instances as they are: only the fields that would change. */
export function previewChanges(list: readonly Instance[], changes: readonly Change[]): FieldChange[] {
  const byVmid = new Map(list.map((instance) => [instance.vmid, instance]));
  const out: FieldChange[] = [];
  for (const { vmid, patch } of changes) {
    const instance = byVmid.get(vmid);
    if (!instance) continue;
    for (const [field, value] of Object.entries(patch) as [keyof Change['patch'], string | number | undefined][]) {
      if (value === undefined || instance[field] === value) continue;
      out.push({ vmid, name: instance.name, field, old: instance[field], new: value });
    }
  }
  return out;
}

/** A run's result: the count (`Updated N of M instances`, as the spec words it), then what the handler noted. */
export const runSummary = (count: string, notes: readonly string[] = []) => [count, ...notes].join('. ');
