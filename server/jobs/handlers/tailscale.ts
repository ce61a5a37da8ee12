import { isIPv6 } from 'node:net';
import * as z from 'zod';
import { IPV4 } from '../../contract/inputs/registry.js';
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
type Device = z.infer<typeof Devices>['devices'][number];

/** How many devices, and how many ambiguous names, a run's result spells out. */
const LISTED = 5;
const NOTED = 20;

const ipv4Of = (device: Device) => device.addresses?.find((address) => IPV4.test(address)) ?? '';
/** The device's IPv6 tailnet address (fd7a:115c:a1e0::/48); a scoped one (`%eth0`) is no tailnet address. */
const ipv6Of = (device: Device) => device.addresses?.find((address) => isIPv6(address) && !address.includes('%')) ?? null;
/** The first label of the MagicDNS name: Tailscale makes it unique (`adguard-1`) where hostnames repeat. */
const magicShortName = (device: Device) => nameKeys(device.name).at(-1);
const described = (device: Device) => `${device.name?.trim() || device.hostname?.trim() || 'a device without a name'} ${ipv4Of(device) || '(no IPv4)'}`;

function listed(devices: readonly Device[]): string {
  const shown = devices.slice(0, LISTED).map(described);
  return devices.length > LISTED ? `${shown.join(', ')} and ${devices.length - LISTED} more` : shown.join(', ');
}

/**
 * Lists the tailnet's devices; an instance whose name is a device's hostname (or the first
 * label of its MagicDNS name) gets `tailscale` 1 and the device's IPv4 address, any other
 * `tailscale` 0 and `tailscale_ip` "". The device's IPv6 address goes beside the registry as a
 * read-only fact (`tailscale_ipv6`), cleared with the match. A name two devices answer to is not settled silently: the
 * device whose MagicDNS short name is exactly the instance's name wins, else the instance is left
 * as it is; either way the run's result says which devices were involved and what was taken.
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
  const byName = new Map<string, Device[]>();
  for (const device of devices) {
    for (const key of new Set([...nameKeys(device.hostname), ...nameKeys(device.name).slice(-1)])) byName.set(key, [...(byName.get(key) ?? []), device]);
  }

  const notes = new Set<string>();
  const changes: Change[] = [];
  for (const instance of instances) {
    const key = instance.name.trim().toLowerCase();
    const matched = byName.get(key) ?? [];
    let device = matched.length === 1 ? matched[0] : undefined;
    if (matched.length > 1) {
      const exact = matched.filter((candidate) => magicShortName(candidate) === key);
      device = exact.length === 1 ? exact[0] : undefined;
      const outcome = device
        ? `took ${described(device)}, whose MagicDNS name is ${key}`
        : `took none, ${instance.name} left unchanged`;
      notes.add(`“${instance.name}” matches ${matched.length} devices (${listed(matched)}): ${outcome}`);
      if (!device) continue;
    }
    changes.push(
      device
        ? { vmid: instance.vmid, patch: { tailscale: 1, tailscale_ip: ipv4Of(device) }, facts: { tailscale_ipv6: ipv6Of(device) } }
        : { vmid: instance.vmid, patch: { tailscale: 0, tailscale_ip: '' }, facts: { tailscale_ipv6: null } },
    );
  }
  const all = [...notes];
  const shown = all.length > NOTED ? [...all.slice(0, NOTED), `and ${all.length - NOTED} more ambiguous names`] : all;
  return { changes, notes: shown.length ? [`Ambiguous: ${shown.join('; ')}`] : [] };
};
