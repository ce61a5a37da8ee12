import { answer, input, route } from '../route.js';
import type { CloudConfigInput, ServerKeyInput } from '../inputs/provisioning.js';
import type { CloudConfig, CloudConfigSummary, ServerKey, ServerKeyChoice } from '../provisioning.js';

/** Server keys and cloud configs: what deploy and rebuild launch guests with. */
export const provisioningRoutes = {
  'GET /api/server-keys': route({ answers: [answer<ServerKeyChoice[]>(200, 'The saved server keys by name, `[{id, name, type, fingerprint}]`, for picking keys to launch with')] }),
  'POST /api/server-keys': route({
    body: input<ServerKeyInput>(),
    answers: [answer<ServerKey>(201, 'The key as saved, never its text (409 `{"error":"server key already saved"}` for the same key material; 400 for a private key)')],
  }),
  'GET /api/server-keys/:id': route({ ids: ['id'], answers: [answer<ServerKey>(200, 'The key')] }),
  'DELETE /api/server-keys/:id': route({ ids: ['id'], answers: [answer(204, 'Deleted')] }),

  'GET /api/cloud-configs': route({ answers: [answer<CloudConfigSummary[]>(200, 'The cloud configs by name, without their bodies')] }),
  'POST /api/cloud-configs': route({
    body: input<CloudConfigInput>(),
    answers: [answer<CloudConfig>(201, 'The cloud config (409 when a config of that name, in any case, exists)')],
  }),
  'GET /api/cloud-configs/:id': route({ ids: ['id'], answers: [answer<CloudConfig>(200, 'The cloud config with its body')] }),
  'PUT /api/cloud-configs/:id': route({ ids: ['id'], body: input<CloudConfigInput>(), answers: [answer<CloudConfig>(200, 'The cloud config as changed')] }),
  'DELETE /api/cloud-configs/:id': route({ ids: ['id'], answers: [answer(204, 'Deleted')] }),
} as const;
