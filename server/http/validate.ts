import type { ZodError, ZodType } from 'zod';
import { badRequest, validationFailed, type FieldError } from '../errors.js';

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

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Path ids (`:vmid`, `:id`) must be integers; anything else is a 400 with the given message. */
export function parseIntegerParam(raw: string | undefined, message: string): number {
  if (raw === undefined || !/^-?\d{1,16}$/.test(raw)) throw badRequest(message);
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw badRequest(message);
  return value;
}
