import type { DeployRequest } from '../contract/inputs/provisioning.js';
import type { FieldError } from '../errors.js';
import { conflict, validationFailed } from '../errors.js';
import type { HostRepo } from '../hosts/repo.js';
import type { DeployFields } from '../contract/provisioning.js';

/** PRODUCT.md: "A launch cannot save keys". */
export const LAUNCH_KEY_ERROR = 'server keys are saved by an administrator; launch with server_key_ids';

/** What server/provisioning lends a launch: saved server keys and cloud configs by id (undefined once deleted), and its key search. */
export interface Launchables {
  serverKey(id: number): { name: string; public_key: string } | undefined;
  cloudConfig(id: number): { name: string; body: string } | undefined;
  /** A launch body (as parsed JSON) that carries key material: a key field at any depth, or a key in any string. */
  carriesKeyMaterial(body: unknown): Promise<boolean>;
}

/** Where a cloud config goes when the launch names no snippets storage: the storage every Proxmox VE node has. */
export const DEFAULT_SNIPPETS_STORAGE = 'local';

/** What a deploy or rebuild names besides its source: as a deploy body or a rebuild's fields over a spec give them. */
export type LaunchValues = Omit<DeployRequest, 'new_vmid' | 'state' | 'stack' | 'tags'>;

/**
 * The deploy's fields as kept (the spec) from what the request gave: its source checked against the
 * host's last heartbeat, keys and config looked up (each unknown id is a 400 of its field),
 * and what one field says of another, the rules the agent would refuse the command by.
 */
export function launchFields(repo: HostRepo, launchables: Launchables, hostId: number, values: LaunchValues): DeployFields {
  const sourceType = sourceTypeOf(repo, hostId, values);
  const errors = crossFieldErrors(sourceType, values);
  const keyNames: string[] = [];
  (values.server_key_ids ?? []).forEach((id, i) => {
    const key = launchables.serverKey(id);
    if (key) keyNames.push(key.name);
    else errors.push({ field: `server_key_ids[${i}]`, message: `server key ${id} is not a saved server key` });
  });
  const config = values.cloud_config_id === undefined ? undefined : launchables.cloudConfig(values.cloud_config_id);
  if (values.cloud_config_id !== undefined && !config) errors.push({ field: 'cloud_config_id', message: `cloud config ${values.cloud_config_id} is not a saved cloud config` });
  if (errors.length) throw validationFailed(errors);
  return {
    host_id: hostId,
    source_type: sourceType,
    source_vmid: values.source_vmid ?? null,
    source_volume: values.source_volume ?? null,
    name: values.name,
    full: values.full ?? false,
    storage: values.storage ?? null,
    cores: values.cores ?? null,
    memory_mb: values.memory_mb ?? null,
    disk_gb: values.disk_gb ?? null,
    network: values.network ?? null,
    ci_user: values.ci_user ?? null,
    server_key_ids: values.server_key_ids ?? [],
    server_key_names: keyNames,
    cloud_config_id: values.cloud_config_id ?? null,
    cloud_config_name: config?.name ?? null,
    snippets_storage: values.snippets_storage ?? (config ? DEFAULT_SNIPPETS_STORAGE : null),
    start: values.start ?? true,
  };
}

/** "source_vmid is a qemu template or guest the host's last heartbeat listed", or source_volume names a container template volume. */
function sourceTypeOf(repo: HostRepo, hostId: number, values: LaunchValues): DeployFields['source_type'] {
  if (values.source_vmid !== undefined && values.source_volume !== undefined) {
    throw validationFailed([{ field: 'source_volume', message: 'give source_vmid or source_volume, not both' }]);
  }
  if (values.source_volume !== undefined) return 'volume';
  if (values.source_vmid === undefined) {
    throw validationFailed([{ field: 'source_vmid', message: 'is required: a template or guest of this host (or source_volume, a container template volume)' }]);
  }
  const source = repo.guestOf(hostId, values.source_vmid);
  if (!source) throw validationFailed([{ field: 'source_vmid', message: `guest ${values.source_vmid} is not one this host listed in its last heartbeat` }]);
  // Proxmox would refuse the clone minutes later: said now, as for guest actions.
  if (source.lock) throw conflict(`source guest ${values.source_vmid} is locked (${source.lock})`);
  return source.type;
}

/** The combinations Proxmox cannot do (and the agent refuses): said as 400s naming the field. */
function crossFieldErrors(sourceType: DeployFields['source_type'], v: LaunchValues): FieldError[] {
  const errors: FieldError[] = [];
  const refuse = (field: string, message: string) => errors.push({ field, message });
  if (sourceType === 'volume') {
    if (v.full !== undefined) refuse('full', 'applies to clones, not to a container template volume');
    if (v.cloud_config_id !== undefined) refuse('cloud_config_id', 'a cloud config cannot be applied to a container');
    if (v.ci_user !== undefined) refuse('ci_user', 'cannot be applied to a container');
    if (v.disk_gb !== undefined && v.storage === undefined) refuse('storage', 'is required with disk_gb for a container template volume');
    return errors;
  }
  if (v.storage !== undefined && v.full !== true) refuse('storage', "needs full: a linked clone stays on its template's storage");
  if (sourceType === 'lxc') {
    if (v.server_key_ids?.length) refuse('server_key_ids', 'ssh keys cannot be applied to a cloned container');
    if (v.cloud_config_id !== undefined) refuse('cloud_config_id', 'a cloud config cannot be applied to a container');
    if (v.ci_user !== undefined) refuse('ci_user', 'cannot be applied to a container');
  }
  return errors;
}

/** A spec's keys and config that were deleted since: a rebuild refuses them (409 naming each). */
export function requireLaunchables(launchables: Launchables, fields: DeployFields): void {
  const gone = missingLaunchables(launchables, fields);
  if (gone) throw conflict(`${gone}: save it again, or rebuild naming another (server_key_ids, cloud_config_id)`);
}

/** The first key or config of the spec that is no longer saved, in words; undefined when all are. */
export function missingLaunchables(launchables: Launchables, fields: DeployFields): string | undefined {
  for (const [i, id] of fields.server_key_ids.entries()) {
    if (!launchables.serverKey(id)) return `server key “${fields.server_key_names[i] ?? id}” (id ${id}) was deleted`;
  }
  if (fields.cloud_config_id !== null && !launchables.cloudConfig(fields.cloud_config_id)) {
    return `cloud config “${fields.cloud_config_name ?? fields.cloud_config_id}” (id ${fields.cloud_config_id}) was deleted`;
  }
  return undefined;
}
