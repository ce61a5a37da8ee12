import * as z from 'zod';
import { ROLES } from './capabilities.js';
import { PASSWORD_MAX, PASSWORD_MIN } from './passwords.js';

export const Username = z
  .string({ error: 'is required' })
  .trim()
  .min(1, { error: 'is required', abort: true })
  .max(64, 'must be at most 64 characters')
  .regex(/^[A-Za-z0-9._@-]+$/, 'may contain only letters, digits and . _ @ -');

export const DisplayName = z
  .string({ error: 'is required' })
  .trim()
  .min(1, 'is required')
  .max(100, 'must be at most 100 characters');

export const Password = z
  .string({ error: 'is required' })
  .min(PASSWORD_MIN, `must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`)
  .max(PASSWORD_MAX, `must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);

export const RoleName = z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` });

export const SetupBody = z.object({
  setup_token: z.string({ error: 'is required' }).max(1024, 'is too long'),
  username: Username,
  display_name: DisplayName,
  password: Password,
});
export type SetupBody = z.infer<typeof SetupBody>;

/** Login takes any text up to a sane size; a wrong length simply does not match. */
export const LoginBody = z.object({
  username: z.string({ error: 'is required' }).max(256, 'is too long'),
  password: z.string({ error: 'is required' }).max(1024, 'is too long'),
});
export type LoginBody = z.infer<typeof LoginBody>;

/** A temporary password "changed" to itself would leave the one the administrator knows in use. */
export const PasswordChangeBody = z
  .object({
    current_password: z.string({ error: 'is required' }).max(1024, 'is too long'),
    new_password: Password,
  })
  .refine((b) => b.new_password.normalize('NFC') !== b.current_password.normalize('NFC'), {
    error: 'must differ from the current password',
    path: ['new_password'],
  });
export type PasswordChangeBody = z.infer<typeof PasswordChangeBody>;

export const UserCreateBody = z.object({ username: Username, display_name: DisplayName, role: RoleName });
export type UserCreateBody = z.infer<typeof UserCreateBody>;

export const UserPatchBody = z.object({
  display_name: DisplayName.optional(),
  role: RoleName.optional(),
  enabled: z.boolean({ error: 'must be true or false' }).optional(),
});
export type UserPatchBody = z.infer<typeof UserPatchBody>;

/** `limit` (default 100, at most 1000) and `before` (an id) of the paged lists: audit and telemetry. */
export const PageQuery = z.object({
  limit: z
    .string()
    .regex(/^\d{1,5}$/, 'must be an integer from 1 to 1000')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be an integer from 1 to 1000').max(1000, 'must be an integer from 1 to 1000'))
    .optional()
    .transform((v) => v ?? 100),
  before: z
    .string()
    .regex(/^\d{1,15}$/, 'must be a positive integer')
    .transform(Number)
    .optional(),
});
export type PageQuery = z.infer<typeof PageQuery>;
