import * as z from 'zod';
import { IPV4 } from '../../registry/schema.js';
import { TAILSCALE_API_URL } from '../destination.js';
import { expectShape } from '../http.js';
import { nameKeys } from '../matcher.js';
import { configText, missingConfigFields } from '../schema.js';
import { missingConfig, type Change, type JobHandler } from './types.js';

const Devices = z.lazy(() =>
  z.object({
    devices: z.array(
      z.looseObject({
        hostname: z.string().nullish(),
        name: z.string().nullish(),
        addresses: z.array(z.string()).nullish(),
      }),
    ),
  }),
);

/**
 * Lists the tailnet's devices; an instance whose name is a device's hostname (or the first
 * label of its MagicDNS name) gets `tailscale` 1 and the device's IPv4 address, any other
 * `tailscale` 0 and `tailscale_ip` "".
 */
export const tailscaleSync: JobHandler = async (config, instances, http) => {
  const apiKey = configText(config, 'api_key');
  if (!apiKey) throw missingConfig('tailscale_sync', missingConfigFields('tailscale_sync', config));
  const base = (configText(config, 'api_url') ?? TAILSCALE_API_URL).replace(/\/+$/, '');
  const tailnet = configText(config, 'tailnet') ?? '-';
  const body = await http.getJson(`${base}/api/v2/tailnet/${encodeURIComponent(tailnet)}/devices`, {
    service: 'Tailscale',
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const { devices } = expectShape(Devices, body, 'Tailscale');

  const addressByName = new Map<string, string>();
  for (const device of devices) {
    const ipv4 = device.addresses?.find((address) => IPV4.test(address)) ?? '';
    const keys = [...nameKeys(device.hostname), ...nameKeys(device.name).slice(-1)];
    for (const key of keys) if (!addressByName.has(key) || (ipv4 && !addressByName.get(key))) addressByName.set(key, ipv4);
  }
  return instances.map((instance): Change => {
    const address = addressByName.get(instance.name.trim().toLowerCase());
    return address === undefined
      ? { vmid: instance.vmid, patch: { tailscale: 0, tailscale_ip: '' } }
      : { vmid: instance.vmid, patch: { tailscale: 1, tailscale_ip: address } };
  });
};
