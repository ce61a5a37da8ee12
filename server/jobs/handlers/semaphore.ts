import * as z from 'zod';
import { expectShape } from '../http.js';
import { parseIniInventory } from '../inventory-ini.js';
import { parseYamlInventory } from '../inventory-yaml.js';
import { createNameMatcher } from '../matcher.js';
import { configText, missingConfigFields } from '../schema.js';
import { missingConfig, type JobHandler } from './types.js';

const Inventory = z.lazy(() =>
  z.looseObject({
    type: z.string(),
    inventory: z.string().nullish(),
  }),
);

/** The host names an inventory holds, by its `type`; any other type fails the run naming it. */
export async function inventoryHosts(type: string, inventory: string): Promise<string[]> {
  if (type === 'static') return parseIniInventory(inventory);
  if (type === 'static-yaml') return parseYamlInventory(inventory);
  throw new Error(`Semaphore inventory type "${type}" is not supported (expected static or static-yaml)`);
}

/** Reads a Semaphore inventory; `semaphore` is 1 on instances named like one of its hosts, 0 elsewhere. */
export const semaphoreSync: JobHandler = async (config, instances, http) => {
  const url = configText(config, 'api_url');
  const token = configText(config, 'api_token');
  const missing = missingConfigFields('semaphore_sync', config);
  if (missing.length) throw missingConfig('semaphore_sync', missing);
  const body = await http.getJson(url!, { service: 'Semaphore', headers: { authorization: `Bearer ${token}` } });
  const answer = expectShape(Inventory, body, 'Semaphore');
  const matches = createNameMatcher(await inventoryHosts(answer.type, answer.inventory ?? ''));
  return { changes: instances.map((instance) => ({ vmid: instance.vmid, patch: { semaphore: matches(instance.name) ? 1 : 0 } })) };
};
