import { answer, input, route } from '../route.js';
import type { Against } from '../inputs/operations.js';
import type { ScriptInput } from '../inputs/scripts.js';
import type { Script, ScriptSummary, ScriptVersion } from '../scripts.js';

/** Scripts (PRODUCT.md "Collections, scripts, campaigns and release channels"): they run only in a campaign. */
export const scriptRoutes = {
  'GET /api/scripts': route({ answers: [answer<ScriptSummary[]>(200, 'The scripts by name, without their bodies')] }),
  'POST /api/scripts': route({
    body: input<ScriptInput>(),
    answers: [answer<Script>(201, 'The script, as version 1 (400 naming the field, a body over 64 KiB of UTF-8 with its size; 409 when a script of that name, in any case, exists)')],
  }),
  'GET /api/scripts/:id': route({ ids: ['id'], answers: [answer<Script>(200, 'The script with its body')] }),
  'PUT /api/scripts/:id': route({
    ids: ['id'],
    body: input<ScriptInput>(),
    answers: [answer<Script>(200, 'The script as changed; a new body is a new version (the last 20 are kept)')],
  }),
  'DELETE /api/scripts/:id': route({ ids: ['id'], answers: [answer(204, 'Deleted, with its versions')] }),
  'GET /api/scripts/:id/versions': route({ ids: ['id'], answers: [answer<ScriptVersion[]>(200, 'The kept versions, newest first')] }),
  'GET /api/scripts/:id/versions/:v': route({ ids: ['id', 'v'], answers: [answer(200, "The version's body", 'text/plain')] }),
  'GET /api/scripts/:id/versions/:v/diff': route({
    ids: ['id', 'v'],
    query: input<Against>(),
    answers: [
      answer(200, 'A unified diff from `against` (default: the version before; none: from nothing) to version `v`', 'text/plain'),
      answer<{ error: string }>(422, 'The versions differ in more than 1,000 lines: `{"error":"the versions differ too much to show a diff"}`'),
    ],
  }),
} as const;
