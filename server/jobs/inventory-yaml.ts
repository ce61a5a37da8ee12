import { expandHostPattern } from './host-pattern.js';

/**
 * Host names of an Ansible YAML inventory: every key of a `hosts` mapping in any group,
 * following `children` to any depth (`all: {hosts: {...}, children: {web: {hosts: {...}}}}`).
 * Rejects with a clear message when the text is not YAML or not an inventory.
 *
 * The YAML parser is a sixth of the server bundle and only this reads YAML, so it is loaded on
 * the first YAML inventory, not at start: the idle server keeps 0.3 MB less.
 */
export async function parseYamlInventory(text: string): Promise<string[]> {
  // yaml is CommonJS: its exports are the default export of a bundled import.
  const { parse } = (await import('yaml')).default;
  let doc: unknown;
  try {
    doc = parse(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new Error(`inventory is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return [];
  if (!isMapping(doc)) throw new Error('inventory YAML is not a mapping of groups');
  const hosts = new Set<string>();
  const seen = new Set<unknown>();
  const visitGroup = (group: unknown, depth: number) => {
    if (!isMapping(group) || seen.has(group) || depth > 50) return;
    seen.add(group);
    if (isMapping(group.hosts)) {
      for (const name of Object.keys(group.hosts)) for (const host of expandHostPattern(name)) hosts.add(host);
    }
    if (isMapping(group.children)) {
      for (const child of Object.values(group.children)) visitGroup(child, depth + 1);
    }
  };
  for (const group of Object.values(doc)) visitGroup(group, 0);
  return [...hosts];
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
