import * as z from 'zod';
import { ROLES } from '../contract/access.js';
import type * as wire from '../contract/access.js';
import { oneOf, shared, type Agrees, type Same } from '../http/validate.js';
import { PASSWORD_MAX, PASSWORD_MIN } from './passwords.js';

const Username = shared(() =>
  z
    .string({ error: 'is required' })
    .trim()
    .min(1, { error: 'is required', abort: true })
    .max(64, 'must be at most 64 characters')
    .regex(/^[A-Za-z0-9._@-]+$/, 'may contain only letters, digits and . _ @ -'),
);

const DisplayName = shared(() =>
  z
    .string({ error: 'is required' })
    .trim()
    .min(1, 'is required')
    .max(100, 'must be at most 100 characters'),
);

const Password = shared(() =>
  z
    .string({ error: 'is required' })
    .min(PASSWORD_MIN, `must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`)
    .max(PASSWORD_MAX, `must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`),
);

const RoleName = shared(() => oneOf(ROLES));

// The wire types are written once, in server/contract; the schemas below are checked against them.

export const SetupBody = z.lazy(() =>
  z.object({
    setup_token: z.string({ error: 'is required' }).max(1024, 'is too long'),
    username: Username(),
    display_name: DisplayName(),
    password: Password(),
  }),
);
export type SetupBody = wire.SetupRequest;
type _SetupBody = Agrees<Same<z.infer<typeof SetupBody>, wire.SetupRequest>>;

/** Login takes any text up to a sane size; a wrong length simply does not match. */
export const LoginBody = z.lazy(() =>
  z.object({
    username: z.string({ error: 'is required' }).max(256, 'is too long'),
    password: z.string({ error: 'is required' }).max(1024, 'is too long'),
  }),
);
export type LoginBody = wire.LoginRequest;

/** A temporary password "changed" to itself would leave the one the administrator knows in use. */
export const PasswordChangeBody = z.lazy(() =>
  z
    .object({
      current_password: z.string({ error: 'is required' }).max(1024, 'is too long'),
      new_password: Password(),
    })
    .refine((b) => b.new_password.normalize('NFC') !== b.current_password.normalize('NFC'), {
      error: 'must differ from the current password',
      path: ['new_password'],
    }),
);
export type PasswordChangeBody = wire.PasswordChange;

export const UserCreateBody = z.lazy(() => z.object({ username: Username(), display_name: DisplayName(), role: RoleName() }));
export type UserCreateBody = wire.UserCreate;

export const UserPatchBody = z.lazy(() =>
  z.object({
    display_name: DisplayName().optional(),
    role: RoleName().optional(),
    enabled: z.boolean({ error: 'must be true or false' }).optional(),
  }),
);
export type UserPatchBody = wire.UserPatch;
