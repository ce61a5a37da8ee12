/**
 * "the value of `cipassword` and of any key containing `password`, `secret` or `token` becomes
 * `**REDACTED**`": the agent's rule (reporter/host-agent.sh redact_config), checked again here so no
 * secret is stored even if an agent forgot it. Also the `key=value` pairs inside `args:` (QEMU's own
 * command line: `-spice port=5900,password=…`) and `lxc.*` values (`lxc.environment: DB_PASSWORD=…`),
 * which the agent redacts to `key=**REDACTED**`.
 */
const REDACTED = '**REDACTED**';
const SECRET_NAME = /password|secret|token/i;

/**
 * A line's key and value. `\s` is any whitespace JavaScript knows, `\r` and U+00A0 among them: a key
 * padded with either is still the key Proxmox reads.
 */
const LINE = /^\s*([A-Za-z0-9_.-]+)\s*[:=]\s*(.*?)\s*$/;
/** The values whose `key=value` pairs are looked into. */
const HOLDS_PAIRS = /^(args|lxc\..+)$/i;
/** One `key=value` pair of such a value: separated by whitespace, commas or semicolons. */
const PAIR = /(?:^|[\s,;])([A-Za-z0-9_.-]+)\s*=\s*([^\s,;]*)/g;

/** The keys (as `key`, or `args (password)` for a pair inside a value) that still hold a secret in `text`; never the values. */
export function unredactedKeys(text: string): string[] {
  const keys: string[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [, key, value] = m as unknown as [string, string, string];
    if (SECRET_NAME.test(key)) {
      if (value !== '' && value !== REDACTED) keys.push(key);
    } else if (HOLDS_PAIRS.test(key)) {
      for (const [, name, secret] of value.matchAll(PAIR) as Iterable<[string, string, string]>) {
        if (SECRET_NAME.test(name) && secret !== '' && secret !== REDACTED) keys.push(`${key} (${name})`);
      }
    }
  }
  return keys;
}
