import { createHash } from 'node:crypto';

export const MAX_CLOUD_CONFIG_BYTES = 64 * 1024;
export const HEADER = '#cloud-config';
/** Keys that would put SSH keys on a guest: keys come only from saved server keys (PRODUCT.md). */
const KEY_FIELDS = new Set(['ssh_authorized_keys', 'ssh_keys']);

export interface CheckedBody {
  size: number;
  sha256: string;
}

/**
 * A cloud config's body held to PRODUCT.md: cloud-init user-data of at most 64 KiB, first line
 * exactly `#cloud-config`, YAML that parses, and no `ssh_authorized_keys` or `ssh_keys` anywhere.
 * Returns the message for the `body` field when it is not, never quoting the body. The YAML parser
 * is loaded on first use (server/jobs/inventory-yaml.ts says why).
 */
export async function checkCloudConfig(body: string): Promise<CheckedBody | { invalid: string }> {
  const size = Buffer.byteLength(body, 'utf8');
  if (size > MAX_CLOUD_CONFIG_BYTES) return { invalid: 'must be at most 64 KiB' };
  const firstLine = body.split('\n', 1)[0]!.replace(/\r$/, '');
  if (firstLine !== HEADER) return { invalid: `must start with the line ${HEADER}` };
  // yaml is CommonJS: its exports are the default export of a bundled import.
  const { parseDocument } = (await import('yaml')).default;
  let value: unknown;
  try {
    // The yaml package's alias limit (100) keeps a "billion laughs" document from growing in memory.
    const doc = parseDocument(body, { uniqueKeys: true });
    const error = doc.errors[0];
    if (error) {
      const at = error.linePos?.[0];
      return { invalid: `is not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ''}` };
    }
    value = doc.toJS({ maxAliasCount: 100 });
  } catch {
    // A nesting deep enough to exhaust the parser's stack, or too many aliases.
    return { invalid: 'is not valid YAML' };
  }
  if (value !== null && value !== undefined && (typeof value !== 'object' || Array.isArray(value))) {
    return { invalid: 'must be a YAML mapping of cloud-config keys' };
  }
  const found = findKeyField(value);
  if (found) return { invalid: `must not hold ${found}: server keys are chosen at deploy from the saved server keys` };
  return { size, sha256: createHash('sha256').update(body, 'utf8').digest('hex') };
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
