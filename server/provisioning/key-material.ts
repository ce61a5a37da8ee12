import { looksPrivate, parsePublicKey } from './ssh-key.js';

/** Field names that carry keys, compared lower-cased with `-` read as `_`. */
const KEY_FIELDS: ReadonlySet<string> = new Set(['ssh_keys', 'sshkeys', 'ssh_public_keys', 'public_key', 'public_keys', 'authorized_keys']);

/**
 * A key's type and base64 anywhere in a text: a string that is a key line, or holds one (a cloud
 * config or a JSON document pasted into a field). The type names are every SSH key type, not only
 * those a server key may have: a DSA key in a launch is key material too.
 */
const KEY_IN_TEXT = /(ssh-ed25519|ssh-rsa|ssh-dss|ecdsa-sha2-nistp(?:256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com)[ \t]+(AAAA[A-Za-z0-9+/]+={0,2})/g;
/** Values searched before the search lets the event loop turn. */
const SLICE = 5000;
/** More candidates than this in one body is key material whatever they parse as (and bounds the work). */
const MAX_CANDIDATES = 64;

/** The first SSH string of a key blob names its own type: a real key's base64, not words that look like one. */
function namesItsType(type: string, base64: string): boolean {
  const blob = Buffer.from(base64.slice(0, 96), 'base64');
  return blob.length >= 4 + type.length && blob.readUInt32BE(0) === type.length && blob.subarray(4, 4 + type.length).toString('latin1') === type;
}

/**
 * True when a launch body (deploy or rebuild, as parsed JSON, before any schema reads it) carries
 * key material: a key field at any depth, or a string that holds an SSH public key (or a private
 * key). Walks without recursion, so a deeply nested body costs a loop, not the stack, and in slices.
 */
export async function carriesKeyMaterial(body: unknown): Promise<boolean> {
  const stack: unknown[] = [body];
  const candidates: [string, string][] = [];
  let walked = 0;
  while (stack.length) {
    // A body of 100,000 strings is searched in slices: other requests are answered between them.
    if (++walked % SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    const value = stack.pop();
    if (typeof value === 'string') {
      // Shorter than any key line or private key marker; a key's base64 always starts AAAA.
      if (value.length < 16) continue;
      if (looksPrivate(value)) return true;
      if (!value.includes('AAAA')) continue;
      // exec on the one regex rather than matchAll, which copies it for every string.
      KEY_IN_TEXT.lastIndex = 0;
      for (let match = KEY_IN_TEXT.exec(value); match; match = KEY_IN_TEXT.exec(value)) {
        candidates.push([match[1]!, match[2]!]);
        if (candidates.length > MAX_CANDIDATES) return true;
      }
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else if (typeof value === 'object' && value !== null) {
      for (const [field, inner] of Object.entries(value)) {
        if (KEY_FIELDS.has(field.toLowerCase().replaceAll('-', '_'))) return true;
        stack.push(inner);
      }
    }
  }
  for (const [type, base64] of candidates) {
    if (namesItsType(type, base64)) return true;
    if ('key' in (await parsePublicKey(`${type} ${base64}`))) return true;
  }
  return false;
}
