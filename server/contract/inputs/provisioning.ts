import * as z from 'zod';
import { plain } from './notifications.js';

/**
 * POST /api/server-keys: `public_key` is read by the server (server/provisioning/ssh-key.ts); the
 * schema only bounds it. 64 KiB: a private key pasted by mistake (a 16384-bit RSA key is about
 * 13 KB) still reaches the check that says so.
 */
export const ServerKeyInput = z.lazy(() =>
  z.object({
    name: plain(100),
    public_key: z.string({ error: 'must be an OpenSSH public key line' }).max(64 * 1024, { error: 'must be one OpenSSH public key line' }),
  }),
);
export type ServerKeyInput = z.output<typeof ServerKeyInput>;

/**
 * POST /api/cloud-configs, PUT …/:id. `body` is held to the cloud-config rules by the server
 * (server/provisioning/cloud-config.ts); the schema bounds it generously so that "at most 64 KiB"
 * is said by that check, counted in bytes.
 */
export const CloudConfigInput = z.lazy(() =>
  z.object({
    name: plain(100),
    description: z.string({ error: 'must be a string' }).trim().max(500, { error: 'must be at most 500 characters' }).optional().default(''),
    body: z.string({ error: 'must be cloud-init user-data starting with #cloud-config' }).max(256 * 1024, { error: 'must be at most 64 KiB' }),
  }),
);
export type CloudConfigInput = z.output<typeof CloudConfigInput>;
