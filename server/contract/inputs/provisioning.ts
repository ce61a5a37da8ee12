import * as z from 'zod';
import { STACKS, STATES } from '../instance-fields.js';
import { plain } from './notifications.js';
import { tagList } from './registry.js';

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

// ---- deploy and rebuild ------------------------------------------------------------------------

/** PRODUCT.md "Deploy, rebuild and server keys": the patterns a launch's fields are held to. */
export const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
export const BRIDGE = /^vmbr[0-9]{1,4}$/;
export const CI_USER = /^[a-z_][a-z0-9_-]{0,31}$/;
export const STORAGE_ID = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
/** A container template volume: `<storage>:vztmpl/<file>`. */
export const TEMPLATE_VOLUME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}:vztmpl\/[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$/;
const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
export const IPV4_ADDRESS = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);
/** `dhcp` or an IPv4 address with its prefix length. */
export const IPV4_CIDR = new RegExp(`^${OCTET}(\\.${OCTET}){3}/([1-9]|[12][0-9]|3[0-2])$`);

const VMID = 'must be a guest id from 100 to 999999999';
const vmid = () => z.int({ error: VMID }).min(100, { error: VMID }).max(999_999_999, { error: VMID });
const whole = (min: number, max: number) => z.int({ error: `must be a whole number from ${min} to ${max}` }).min(min, { error: `must be from ${min} to ${max}` }).max(max, { error: `must be from ${min} to ${max}` });
const pattern = (re: RegExp, message: string) => z.string({ error: message }).regex(re, { error: message });
const storageId = () => pattern(STORAGE_ID, 'must be a storage id: a letter, then letters, digits, _ . - (at most 64)');
const id = () => z.int({ error: 'must be an id' }).positive({ error: 'must be an id' });
/** A list counted before its items are read: a 1 MiB body of 100,000 items is refused for its length, not checked item by item. */
const boundedList = (max: number, notList: string, tooLong: string) => z.array(z.unknown(), { error: notList }).max(max, { error: tooLong });

/** What a deploy and a rebuild share: the guest's source, sizes, network, user, keys and cloud config. */
const launchFields = () => ({
  source_vmid: vmid().optional(),
  source_volume: pattern(TEMPLATE_VOLUME, 'must be a container template volume such as local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst').optional(),
  name: pattern(DNS_LABEL, 'must be a DNS label: lower-case letters, digits and - (at most 63)'),
  full: z.boolean({ error: 'must be true or false' }).optional(),
  storage: storageId().optional(),
  cores: whole(1, 128).optional(),
  memory_mb: whole(64, 4_194_304).optional(),
  disk_gb: whole(1, 65_536).optional(),
  network: z
    .object(
      {
        bridge: pattern(BRIDGE, 'must be a bridge such as vmbr0'),
        vlan: whole(1, 4094).optional(),
        ip: z.string({ error: 'must be dhcp or an address a.b.c.d/nn' }).refine((v) => v === 'dhcp' || IPV4_CIDR.test(v), { error: 'must be dhcp or an address a.b.c.d/nn' }),
        gateway: pattern(IPV4_ADDRESS, 'must be an IPv4 address a.b.c.d').optional(),
      },
      { error: 'must be an object {bridge, vlan?, ip, gateway?}' },
    )
    .refine((n) => n.gateway === undefined || n.ip !== 'dhcp', { error: 'a gateway goes with a static ip, not dhcp', path: ['gateway'] })
    .optional(),
  ci_user: pattern(CI_USER, 'must be a user name: a lower-case letter or _, then letters, digits, _ and - (at most 32)').optional(),
  server_key_ids: boundedList(100, 'must be a list of server key ids', 'must name at most 100 keys')
    .pipe(z.array(id()).refine((ids) => new Set(ids).size === ids.length, { error: 'must name each key once' }))
    .optional(),
  cloud_config_id: id().optional(),
  snippets_storage: storageId().optional(),
  start: z.boolean({ error: 'must be true or false' }).optional(),
});

/**
 * POST /api/hosts/:id/deploy. The server adds what needs the host (the source is one its heartbeat
 * listed, the vmid is free, the keys and config exist) and what one field says of another.
 */
export const DeployBody = z.lazy(() =>
  z.object(
    {
      new_vmid: vmid(),
      ...launchFields(),
      start: z.boolean({ error: 'must be true or false' }).default(true),
      state: z.enum(STATES, { error: `must be one of ${STATES.join(', ')}` }).default('testing'),
      stack: z.enum(STACKS, { error: `must be one of ${STACKS.join(', ')}` }).default('development'),
      // The new instance's tags, as an instance's are written.
      tags: tagList().optional(),
    },
    { error: 'must be a JSON object' },
  ),
);
/** As a client sends it. */
export type DeployInput = z.input<typeof DeployBody>;
/** As the server reads it (`start`, `state`, `stack` defaulted). */
export type DeployRequest = z.output<typeof DeployBody>;

/** The deploy fields a rebuild may take beside `action: "rebuild"`: all optional, over the guest's deploy spec. */
export const rebuildFields = () => {
  const { name, ...rest } = launchFields();
  return { ...rest, name: name.optional() };
};
