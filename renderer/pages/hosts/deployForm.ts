import type { Guest } from '../../../server/contract/hosts';
import type { DeploySpec } from '../../../server/contract/provisioning';
import type { DeployInput } from '../../../server/contract/inputs/provisioning';
import type { GuestLatest } from '../../../server/contract/metrics';
import type { Stack, State } from '../../../server/contract/instance-fields';
import { isProxmoxVmid, VMID_RANGE_TEXT } from '../../vmid';

// The launch patterns of server/contract/inputs/provisioning.ts (a zod module the bundle may not take
// by value); test/deploy-form-patterns.test.ts holds the two copies to one another.
export const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
export const BRIDGE = /^vmbr[0-9]{1,4}$/;
export const CI_USER = /^[a-z_][a-z0-9_-]{0,31}$/;
export const STORAGE_ID = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
export const TEMPLATE_VOLUME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}:vztmpl\/[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$/;
const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
export const IPV4_ADDRESS = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);
export const IPV4_CIDR = new RegExp(`^${OCTET}(\\.${OCTET}){3}/([1-9]|[12][0-9]|3[0-2])$`);

/** What the source is: a qemu or lxc template of the host (cloned), or a container template volume (`pct create`). */
export type SourceKind = 'qemu' | 'lxc' | 'volume';
/** The source select's value for a container template volume; a template's value is its vmid. */
export const VOLUME = 'volume';

/** The dialog's fields as typed (text boxes hold text until the body is made). */
export interface DeployForm {
  source: string;
  volume: string;
  new_vmid: string;
  name: string;
  full: boolean;
  storage: string;
  cores: string;
  memory_mb: string;
  disk_gb: string;
  /** Off: the template's own network is kept. */
  network: boolean;
  bridge: string;
  vlan: string;
  dhcp: boolean;
  ip: string;
  gateway: string;
  ci_user: string;
  server_key_ids: number[];
  cloud_config_id: string;
  snippets_storage: string;
  start: boolean;
  state: State;
  stack: Stack;
}

const MIB = 2 ** 20;
const GIB = 2 ** 30;

/** The next VMID to suggest: above every one the registry and this host know (and at least 100). */
export function nextVmid(known: Iterable<number>): number {
  let top = 99;
  for (const vmid of known) if (vmid > top) top = vmid;
  return top + 1;
}

/**
 * The sizes to pre-fill from a template's last reported numbers: memory in MiB, the boot disk in
 * whole GiB rounded down (the disk only grows, so the pre-filled size never asks for a resize).
 */
export function templateSizes(latest: Pick<GuestLatest, 'maxmem' | 'maxdisk'> | undefined): { memory_mb: string; disk_gb: string } {
  const memory = latest?.maxmem ? Math.round(latest.maxmem / MIB) : 0;
  const disk = latest?.maxdisk ? Math.floor(latest.maxdisk / GIB) : 0;
  return { memory_mb: memory >= 64 ? String(memory) : '', disk_gb: disk >= 1 ? String(disk) : '' };
}

export function sourceKind(form: Pick<DeployForm, 'source'>, templates: Pick<Guest, 'vmid' | 'type'>[]): SourceKind | undefined {
  if (form.source === VOLUME) return 'volume';
  return templates.find((t) => String(t.vmid) === form.source)?.type;
}

/**
 * What a source can take (the agent refuses the rest): keys for a qemu clone and a template volume;
 * a cloud config and a cloud-init user for qemu only; a full clone (and its storage) for a clone.
 */
export const offers = (kind: SourceKind | undefined) => ({
  keys: kind === 'qemu' || kind === 'volume',
  cloudInit: kind === 'qemu',
  full: kind === 'qemu' || kind === 'lxc',
});

const whole = (text: string, min: number, max: number): number | string => {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return `must be a whole number from ${min} to ${max}`;
  const n = Number(t);
  return n >= min && n <= max ? n : `must be from ${min} to ${max}`;
};

/**
 * The request body for the form, or the fields that are wrong (keyed as the server's 400 names them,
 * `network.ip`, so either shows beside the same box). Empty optional boxes are left out: the
 * template's own value stays.
 */
export function deployBody(form: DeployForm, templates: Pick<Guest, 'vmid' | 'type'>[]): { body: DeployInput; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const body: DeployInput = { new_vmid: 0, name: form.name.trim(), start: form.start, state: form.state, stack: form.stack };
  const kind = sourceKind(form, templates);
  const can = offers(kind);
  if (!kind) errors.source_vmid = 'choose a template or a container template volume';
  else if (kind === 'volume') {
    if (TEMPLATE_VOLUME.test(form.volume.trim())) body.source_volume = form.volume.trim();
    else errors.source_volume = 'must be a container template volume such as local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst';
  } else body.source_vmid = Number(form.source);

  const vmid = form.new_vmid.trim();
  if (/^\d+$/.test(vmid) && isProxmoxVmid(Number(vmid))) body.new_vmid = Number(vmid);
  else errors.new_vmid = `must be a whole number from ${VMID_RANGE_TEXT}`;
  if (!DNS_LABEL.test(body.name)) errors.name = 'must be a DNS label: lower-case letters, digits and - (at most 63)';

  if (can.full && form.full) body.full = true;
  const storage = form.storage.trim();
  if (storage && (kind === 'volume' || body.full)) {
    if (STORAGE_ID.test(storage)) body.storage = storage;
    else errors.storage = 'must be a storage id: a letter, then letters, digits, _ . - (at most 64)';
  }
  const sizes = [
    ['cores', form.cores, 1, 128],
    ['memory_mb', form.memory_mb, 64, 4_194_304],
    ['disk_gb', form.disk_gb, 1, 65_536],
  ] as const;
  for (const [field, text, min, max] of sizes) {
    if (!text.trim()) continue;
    const value = whole(text, min, max);
    if (typeof value === 'number') body[field] = value;
    else errors[field] = value;
  }
  // "--rootfs <storage>:<disk_gb>": a container made from a volume needs both or neither.
  if (kind === 'volume' && body.disk_gb !== undefined && !storage) errors.storage = 'is needed with a disk size: the storage the root disk is made on';

  if (form.network) {
    const network: NonNullable<DeployInput['network']> = { bridge: form.bridge.trim(), ip: form.dhcp ? 'dhcp' : form.ip.trim() };
    if (!BRIDGE.test(network.bridge)) errors['network.bridge'] = 'must be a bridge such as vmbr0';
    if (form.vlan.trim()) {
      const vlan = whole(form.vlan, 1, 4094);
      if (typeof vlan === 'number') network.vlan = vlan;
      else errors['network.vlan'] = vlan;
    }
    if (!form.dhcp) {
      if (!IPV4_CIDR.test(network.ip)) errors['network.ip'] = 'must be an address a.b.c.d/nn';
      if (form.gateway.trim()) {
        if (IPV4_ADDRESS.test(form.gateway.trim())) network.gateway = form.gateway.trim();
        else errors['network.gateway'] = 'must be an IPv4 address a.b.c.d';
      }
    }
    body.network = network;
  }
  if (can.cloudInit && form.ci_user.trim()) {
    if (CI_USER.test(form.ci_user.trim())) body.ci_user = form.ci_user.trim();
    else errors.ci_user = 'must be a user name: a lower-case letter or _, then letters, digits, _ and - (at most 32)';
  }
  if (can.keys && form.server_key_ids.length) body.server_key_ids = [...form.server_key_ids];
  if (can.cloudInit && form.cloud_config_id) {
    body.cloud_config_id = Number(form.cloud_config_id);
    const snippets = form.snippets_storage.trim();
    if (STORAGE_ID.test(snippets)) body.snippets_storage = snippets;
    else errors.snippets_storage = snippets ? 'must be a storage id: a letter, then letters, digits, _ . - (at most 64)' : 'is needed with a cloud config: a storage with snippets content';
  }
  return { body, errors };
}

/** What the new guest's address will be: the static one of the spec, or DHCP's, which no heartbeat carries. */
export function addressText(network: DeployInput['network'] | null | undefined): string {
  if (!network) return 'as the template’s network gives it (homefleet does not collect guest addresses yet)';
  return network.ip === 'dhcp' ? 'DHCP (from your DHCP server; homefleet does not collect guest addresses yet)' : network.ip.replace(/\/\d+$/, '');
}

/**
 * Where a deploy failed, from the end of its output (reporter/host-agent.sh `run_deploy`):
 * `homefleet-agent: the deploy failed at: <step> (exit N)[; the half-made guest … was removed]`,
 * or the agent's refusal of the whole command (nothing ran).
 */
export function failedStep(output: string | null | undefined): { step: string; exit: number; after: string } | { refused: string } | undefined {
  if (!output) return undefined;
  const lines = output.trimEnd().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const failed = /^homefleet-agent: the deploy failed at: (.*) \(exit (\d+)\)(?:; (.*))?$/.exec(lines[i]!);
    if (failed) return { step: failed[1]!, exit: Number(failed[2]), after: failed[3] ?? '' };
    const refused = /^refused by the agent: (.*)$/.exec(lines[i]!);
    if (refused) return { refused: refused[1]! };
  }
  return undefined;
}

/** Where a deploy spec's guest came from, in words: "VM template 9000", "container 200", "local:vztmpl/…". */
export function deploySource(spec: Pick<DeploySpec, 'source_type' | 'source_vmid' | 'source_volume'>): string {
  if (spec.source_type === 'volume') return `the container template volume ${spec.source_volume}`;
  return `${spec.source_type === 'qemu' ? 'VM' : 'container'} ${spec.source_vmid}`;
}

/** A spec's network in words: "vmbr1, VLAN 42, 192.0.2.30/24 via 192.0.2.1", or the template's. */
export function networkText(network: DeploySpec['network']): string {
  if (!network) return 'the template’s';
  const address = network.ip === 'dhcp' ? 'DHCP' : `${network.ip}${network.gateway ? ` via ${network.gateway}` : ''}`;
  return [network.bridge, network.vlan ? `VLAN ${network.vlan}` : '', address].filter(Boolean).join(', ');
}
