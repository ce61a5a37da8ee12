import * as z from 'zod';
import { expectShape } from '../http.js';
import { createNameMatcher } from '../matcher.js';
import { configText, missingConfigFields } from '../schema.js';
import { missingConfig, type JobHandler } from './types.js';

const Hosts = z.lazy(() =>
  z.object({
    hosts: z.array(
      z.looseObject({
        hostname: z.string().nullish(),
        friendly_name: z.string().nullish(),
      }),
    ),
  }),
);

/** "when api_token contains a colon it is base64-encoded before sending, otherwise it is sent as given" */
export function basicCredential(token: string): string {
  return token.includes(':') ? Buffer.from(token, 'utf8').toString('base64') : token;
}

/** Lists PatchMon's hosts; `patchmon` is 1 on instances named like a host's hostname or friendly name, 0 elsewhere. */
export const patchmonSync: JobHandler = async (config, instances, http) => {
  const url = configText(config, 'api_url');
  const token = configText(config, 'api_token');
  const missing = missingConfigFields('patchmon_sync', config);
  if (missing.length) throw missingConfig('patchmon_sync', missing);
  const body = await http.getJson(url!, { service: 'PatchMon', headers: { authorization: `Basic ${basicCredential(token!)}` } });
  const { hosts } = expectShape(Hosts, body, 'PatchMon');
  const matches = createNameMatcher(hosts.flatMap((host) => [host.hostname, host.friendly_name]));
  return { changes: instances.map((instance) => ({ vmid: instance.vmid, patch: { patchmon: matches(instance.name) ? 1 : 0 } })) };
};
