import { createHash } from 'node:crypto';
import { yamlProblemOffThread } from './yaml-thread.js';

export const MAX_CLOUD_CONFIG_BYTES = 64 * 1024;
export const HEADER = '#cloud-config';

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
 * The checks run one at a time: on the YAML thread (yaml-thread.ts), or, where it cannot start, on
 * the event loop, each in a turn of its own, so a health check waits for at most one of them.
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
  const problem = await yamlProblemOffThread(body);
  if (problem) return { invalid: problem };
  return { size, sha256: createHash('sha256').update(body, 'utf8').digest('hex') };
}
