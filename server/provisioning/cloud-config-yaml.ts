import type { parseDocument as ParseDocument } from 'yaml';

/** Keys that would put SSH keys on a guest: keys come only from saved server keys (PRODUCT.md). */
const KEY_FIELDS = new Set(['ssh_authorized_keys', 'ssh_keys']);

/**
 * What is wrong with a cloud config's YAML, in the words of the `body` field's error, or undefined:
 * it must parse (unique keys, at most 100 aliases), be a mapping, and hold no SSH key field at any
 * depth. Synchronous and given the parser, so that the YAML thread (yaml-worker.ts) and the event
 * loop run the same check.
 */
export function yamlProblem(body: string, parseDocument: typeof ParseDocument): string | undefined {
  let value: unknown;
  try {
    // The yaml package's alias limit (100) keeps a "billion laughs" document from growing in memory.
    const doc = parseDocument(body, { uniqueKeys: true });
    const error = doc.errors[0];
    if (error) {
      const at = error.linePos?.[0];
      return `is not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ''}`;
    }
    value = doc.toJS({ maxAliasCount: 100 });
  } catch {
    // A nesting deep enough to exhaust the parser's stack, or too many aliases.
    return 'is not valid YAML';
  }
  if (value !== null && value !== undefined && (typeof value !== 'object' || Array.isArray(value))) {
    return 'must be a YAML mapping of cloud-config keys';
  }
  const found = findKeyField(value);
  return found ? `must not hold ${found}: server keys are chosen at deploy from the saved server keys` : undefined;
}

/** The first forbidden key at any depth (in mappings and lists), walked without recursion. */
function findKeyField(root: unknown): string | undefined {
  const stack: unknown[] = [root];
  const seen = new Set<object>();
  while (stack.length) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    if (value instanceof Map) {
      for (const [k, v] of value) {
        if (typeof k === 'string' && KEY_FIELDS.has(k.toLowerCase())) return k.toLowerCase();
        stack.push(k, v);
      }
    } else if (Array.isArray(value) || value instanceof Set) {
      for (const item of value) stack.push(item);
    } else {
      for (const [k, v] of Object.entries(value)) {
        if (KEY_FIELDS.has(k.toLowerCase())) return k.toLowerCase();
        stack.push(v);
      }
    }
  }
  return undefined;
}
