import * as z from 'zod';
import { ROLES } from '../access.js';
import { oneOf, shared } from './parts.js';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

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

/** POST /setup: the first administrator, with the server's setup token. */
export const SetupBody = z.lazy(() =>
  z.object({
    setup_token: z.string({ error: 'is required' }).max(1024, 'is too long'),
    username: Username(),
    display_name: DisplayName(),
    password: Password(),
  }),
);
export type SetupRequest = z.output<typeof SetupBody>;

/** POST /api/auth/login: any text up to a sane size; a wrong length simply does not match. */
export const LoginBody = z.lazy(() =>
  z.object({
    username: z.string({ error: 'is required' }).max(256, 'is too long'),
    password: z.string({ error: 'is required' }).max(1024, 'is too long'),
  }),
);
export type LoginRequest = z.output<typeof LoginBody>;

/** POST /api/auth/password. A temporary password "changed" to itself would leave the one the administrator knows in use. */
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
export type PasswordChange = z.output<typeof PasswordChangeBody>;

/** POST /api/users: the account gets a temporary password, answered once. */
export const UserCreateBody = z.lazy(() => z.object({ username: Username(), display_name: DisplayName(), role: RoleName() }));
export type UserCreate = z.output<typeof UserCreateBody>;

/** PATCH /api/users/:id: omitted fields are unchanged. */
export const UserPatchBody = z.lazy(() =>
  z.object({
    display_name: DisplayName().optional(),
    role: RoleName().optional(),
    enabled: z.boolean({ error: 'must be true or false' }).optional(),
  }),
);
export type UserPatch = z.output<typeof UserPatchBody>;
