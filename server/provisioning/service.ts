import type { AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import { createCloudConfigs } from './cloud-configs.js';
import { createProvisioningRepo } from './repo.js';
import { createServerKeys } from './server-keys.js';

/**
 * What deploy and rebuild launch guests with: server keys and cloud configs, each looked up by id
 * (`serverKeys.get`, `cloudConfigs.get`: undefined once deleted).
 */
export function createProvisioning(ctx: AppContext, audit: AuditLog) {
  const repo = createProvisioningRepo(ctx.db);
  return { serverKeys: createServerKeys(ctx, repo, audit), cloudConfigs: createCloudConfigs(ctx, repo, audit) };
}

export type Provisioning = ReturnType<typeof createProvisioning>;
