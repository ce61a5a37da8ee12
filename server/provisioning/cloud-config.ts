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
  if (flowDepth(body) > MAX_FLOW_DEPTH) return { invalid: `is nested too deeply (more than ${MAX_FLOW_DEPTH} levels of [ ] or { })` };
  return inTurn(() => parseAndCheck(body, size));
}

/**
 * Parsing 64 KiB of YAML takes 100 to 300 ms of the event loop, and there is no way to slice it: the
 * checks run one at a time, each in a turn of its own, so a health check or another request waits
 * for at most one of them, not for eight sent at once.
 */
let queue: Promise<unknown> = Promise.resolve();
function inTurn<T>(check: () => Promise<T>): Promise<T> {
  const turn = queue.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(check);
  queue = turn.catch(() => undefined);
  return turn;
}

/**
 * The deepest nesting of flow collections ([ ] and { }) outside quotes and comments: the one way a
 * small body makes the parser work hard (30,000 brackets: half a second). Block nesting is bounded by
 * the size (each level indents every line below it). Brackets inside a block scalar's text count
 * too, which only refuses a config with more than 64 of them unclosed.
 */
const MAX_FLOW_DEPTH = 64;
function flowDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '[' || c === '{') deepest = Math.max(deepest, ++depth);
    else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) i = skipTo(text, i, '\n');
    else if (c === "'") i = skipTo(text, i, "'");
    else if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    }
  }
  return deepest;
}
const skipTo = (text: string, from: number, end: string) => {
  const at = text.indexOf(end, from + 1);
  return at === -1 ? text.length : at;
};

async function parseAndCheck(body: string, size: number): Promise<CheckedBody | { invalid: string }> {
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
