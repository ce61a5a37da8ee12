import { nameOf, type AuditChange, type AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { CloudConfigInput } from '../contract/inputs/provisioning.js';
import type { CloudConfig, CloudConfigSummary } from '../contract/provisioning.js';
import { conflict, notFound, validationFailed } from '../errors.js';
import { isoSeconds } from '../time.js';
import { checkCloudConfig, type CheckedBody } from './cloud-config.js';
import type { CloudConfigRow, CloudConfigValues, ProvisioningRepo } from './repo.js';

const summary = (row: Omit<CloudConfigRow, 'body'>): CloudConfigSummary => ({
  id: row.id,
  name: row.name,
  description: row.description,
  size: row.size,
  sha256: row.sha256,
  updated_by: row.updated_by,
  updated_at: row.updated_at,
});
const present = (row: CloudConfigRow): CloudConfig => ({ ...summary(row), body: row.body });

const subject = (row: { id: number; name: string }) => ({ type: 'cloud_config', id: String(row.id), name: row.name });

type CheckedInput = CloudConfigInput & CheckedBody;

const NAME_TAKEN = 'a cloud config of that name already exists';

/** Field by field for the change log; the body only by its size and hash, never its text. */
function changesOf(before: Partial<CloudConfigValues>, after: CloudConfigValues): AuditChange[] {
  return (['name', 'description', 'size', 'sha256'] as const)
    .filter((f) => before[f] !== after[f])
    .map((f) => ({ field: f, before: before[f] ?? null, after: after[f] }));
}

/**
 * Cloud configs: cloud-init user-data that deploy writes to a host's snippets storage. Names are
 * unique whatever their case, so a person picks one by name without doubt.
 */
export function createCloudConfigs(ctx: Pick<AppContext, 'transaction' | 'clock'>, repo: ProvisioningRepo, audit: AuditLog) {
  /** Checked before the transaction (the YAML parser may have to load); stamped inside it. */
  async function checked(input: CloudConfigInput): Promise<CheckedInput> {
    const result = await checkCloudConfig(input.body);
    if ('invalid' in result) throw validationFailed([{ field: 'body', message: result.invalid }]);
    return { ...input, ...result };
  }
  const values = (input: CheckedInput): CloudConfigValues => ({
    name: input.name,
    description: input.description,
    body: input.body,
    size: input.size,
    sha256: input.sha256,
    updated_by: nameOf(),
    updated_at: isoSeconds(ctx.clock.now()),
  });

  /** The name's UNIQUE index decides between parallel writes. */
  function unique<T>(write: () => T): T {
    try {
      return write();
    } catch (err) {
      if ((err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict(NAME_TAKEN);
      throw err;
    }
  }

  const createTx = ctx.transaction((input: CheckedInput): CloudConfig => {
    const value = values(input);
    const id = unique(() => repo.insertConfig(value));
    audit.write({
      action: 'cloud_config.create',
      subject: subject({ id, name: value.name }),
      summary: `${nameOf()} added cloud config “${value.name}”`,
      changes: changesOf({}, value),
    });
    return present({ id, ...value });
  });

  const updateTx = ctx.transaction((id: number, input: CheckedInput): CloudConfig => {
    const before = repo.config(id);
    if (!before) throw notFound('cloud config not found');
    const value = values(input);
    unique(() => repo.updateConfig(id, value));
    audit.write({
      action: 'cloud_config.update',
      subject: subject({ id, name: value.name }),
      summary: `${nameOf()} changed cloud config “${value.name}”`,
      changes: changesOf(before, value),
    });
    return present({ id, ...value });
  });

  const deleteTx = ctx.transaction((id: number): void => {
    const row = repo.config(id);
    if (!row || !repo.deleteConfig(id)) throw notFound('cloud config not found');
    audit.write({ action: 'cloud_config.delete', subject: subject(row), summary: `${nameOf()} deleted cloud config “${row.name}”` });
  });

  return {
    list: (): CloudConfigSummary[] => repo.configs().map(summary),
    read(id: number): CloudConfig {
      const row = repo.config(id);
      if (!row) throw notFound('cloud config not found');
      return present(row);
    },
    /** For deploy and rebuild: the config with its body, or undefined when it was deleted (or never was). */
    get: (id: number): CloudConfig | undefined => {
      const row = repo.config(id);
      return row && present(row);
    },
    create: async (input: CloudConfigInput): Promise<CloudConfig> => createTx(await checked(input)),
    update: async (id: number, input: CloudConfigInput): Promise<CloudConfig> => updateTx(id, await checked(input)),
    remove: deleteTx,
  };
}

export type CloudConfigs = ReturnType<typeof createCloudConfigs>;
