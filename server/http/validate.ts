import type { ZodError, ZodType } from 'zod';
import { badRequest, validationFailed, type FieldError } from '../errors.js';

// The schema parts the wire's input schemas use (server/contract/inputs/), for the schemas of the server's own.
export { isPlainObject, oneOf, shared } from '../contract/inputs/parts.js';

/** zod issues as the API's `errors` array: one entry per field, the body itself as `body`. */
export function fieldErrors(error: ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join('.') : 'body',
    message: issue.message,
  }));
}

/** Parses a value with a schema or throws the 400 `{errors: [...]}` the API promises. */
export function parseWith<T>(schema: ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw validationFailed(fieldErrors(result.error));
  return result.data;
}

/** A path id (`:vmid`, `:id`) is an integer; anything else is a 400 `invalid <name>` ("invalid vmid"). */
export function parseId(raw: string | undefined, name: string): number {
  if (raw === undefined || !/^-?\d{1,16}$/.test(raw)) throw badRequest(`invalid ${name}`);
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw badRequest(`invalid ${name}`);
  return value;
}

type Flat<T> = T extends object ? { [K in keyof T]: T[K] } : T;
/**
 * `true` when A and B are the same type (optional and readonly marks included, one level of
 * intersection flattened), else `false`. Mutual assignability would call `{a?: string}` and `{}`
 * the same; this does not.
 */
export type Same<A, B> = (<T>() => T extends Flat<A> ? 1 : 2) extends (<T>() => T extends Flat<B> ? 1 : 2) ? true : false;
/**
 * A compile-time check that a zod schema reads exactly a type written elsewhere:
 * `type _ = Agrees<Same<z.infer<typeof X>, contract.X>>`. Inputs need none (their type is their
 * schema's, server/contract/inputs/); the backup's rows do, held to the answer types the export writes.
 * A mismatch fails `tsc` with "Type 'false' does not satisfy the constraint 'true'" on that line.
 */
export type Agrees<T extends true> = T;
