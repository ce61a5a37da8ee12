import * as z from 'zod';

/**
 * A schema part several schemas share, built when one of them is first built (they are z.lazy) and
 * the same instance after. A z.lazy of its own would cost every parse a step per field.
 */
export function shared<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

/** One of a list of names, or a 400 that lists them: `must be one of viewer, operator, administrator`. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
