import * as z from 'zod';
import { SCRIPT_INTERPRETERS, SCRIPT_TARGETS } from '../scripts.js';
import { plain } from './notifications.js';

/**
 * POST /api/scripts, PUT …/:id. "at most 64 KiB of UTF-8" is counted in bytes by the server
 * (server/scripts), which names the size; the schema bounds the string generously so that a 70 KiB
 * body still reaches that check and its message.
 */
export const ScriptInput = z.lazy(() =>
  z.object(
    {
      name: plain(100),
      description: z.string({ error: 'must be a string' }).trim().max(500, { error: 'must be at most 500 characters' }).optional().default(''),
      runs_on: z.enum(SCRIPT_TARGETS, { error: 'must be host or guest' }),
      interpreter: z.enum(SCRIPT_INTERPRETERS, { error: 'must be bash, sh or python3' }),
      body: z.string({ error: 'must be the script as a string' }).max(256 * 1024, { error: 'must be at most 64 KiB of UTF-8' }),
    },
    { error: 'must be a JSON object' },
  ),
);
export type ScriptInput = z.output<typeof ScriptInput>;

const whole = (message: string) => z.int({ error: message }).positive({ error: message });
const stamp = () => z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(200, { error: 'must be at most 200 characters' });

/**
 * A script of a backup document's `scripts` (POST /api/import). `size` and `sha256` are worked out
 * again from the body, so a hand-edited document cannot carry a hash that does not match it.
 */
export const BackupScriptRow = z.lazy(() =>
  z.object(
    {
      id: whole('must be a script id'),
      name: plain(100),
      description: z.string({ error: 'must be a string' }).max(500, { error: 'must be at most 500 characters' }).default(''),
      runs_on: z.enum(SCRIPT_TARGETS, { error: 'must be host or guest' }),
      interpreter: z.enum(SCRIPT_INTERPRETERS, { error: 'must be bash, sh or python3' }),
      body: z.string({ error: 'must be the script as a string' }).max(256 * 1024, { error: 'must be at most 64 KiB of UTF-8' }),
      version: whole('must be a version number'),
      updated_by: stamp(),
      updated_at: stamp(),
      versions: z
        .array(
          z.object({
            version: whole('must be a version number'),
            body: z.string({ error: 'must be the script as a string' }).max(256 * 1024, { error: 'must be at most 64 KiB of UTF-8' }),
            updated_by: stamp(),
            updated_at: stamp(),
          }),
          { error: 'must be a list of versions' },
        )
        .max(20, { error: 'must hold at most 20 versions' })
        .default([]),
    },
    { error: 'must be a JSON object' },
  ),
);
export type BackupScriptRow = z.output<typeof BackupScriptRow>;
