import { describe, expect, it } from 'vitest';
import { addressText, deployBody, failedStep, nextVmid, templateSizes, VOLUME, type DeployForm } from './deployForm';

const templates = [
  { vmid: 9000, type: 'qemu' as const },
  { vmid: 9100, type: 'lxc' as const },
];
const blank: DeployForm = {
  ...{ source: '9000', volume: '', new_vmid: '301', name: 'web', full: false, storage: '', cores: '', memory_mb: '', disk_gb: '' },
  ...{ network: false, bridge: 'vmbr0', vlan: '', dhcp: true, ip: '', gateway: '', ci_user: '', server_key_ids: [], cloud_config_id: '', snippets_storage: 'local' },
  ...{ start: true, state: 'testing', stack: 'development' },
};

describe('the Deploy dialog’s form', () => {
  it('suggests the VMID above every one known, and at least 100', () => {
    expect(nextVmid([])).toBe(100);
    expect(nextVmid([5, 42])).toBe(100);
    expect(nextVmid([100, 9100, 301])).toBe(9101);
  });

  it('pre-fills memory in MiB and the disk in whole GiB rounded down (the disk only grows)', () => {
    expect(templateSizes({ maxmem: 2 * 2 ** 30, maxdisk: 36352 * 2 ** 20 })).toEqual({ memory_mb: '2048', disk_gb: '35' });
    expect(templateSizes(undefined)).toEqual({ memory_mb: '', disk_gb: '' });
    expect(templateSizes({ maxmem: null, maxdisk: 0 })).toEqual({ memory_mb: '', disk_gb: '' });
  });

  it('leaves empty boxes out: the template’s own values stay', () => {
    expect(deployBody(blank, templates)).toEqual({ body: { new_vmid: 301, name: 'web', source_vmid: 9000, start: true, state: 'testing', stack: 'development' }, errors: {} });
  });

  it('makes a qemu clone’s whole body: full clone on a storage, sizes, a static network with a VLAN, user, keys, cloud config', () => {
    const form: DeployForm = {
      ...blank,
      ...{ full: true, storage: 'local-lvm', cores: '2', memory_mb: '2048', disk_gb: '40', network: true, bridge: 'vmbr1', vlan: '42', dhcp: false },
      ...{ ip: '192.0.2.30/24', gateway: '192.0.2.1', ci_user: 'ops', server_key_ids: [3, 1], cloud_config_id: '7', snippets_storage: 'local' },
    };
    expect(deployBody(form, templates)).toEqual({
      body: {
        ...{ new_vmid: 301, name: 'web', source_vmid: 9000, full: true, storage: 'local-lvm', cores: 2, memory_mb: 2048, disk_gb: 40 },
        ...{ network: { bridge: 'vmbr1', vlan: 42, ip: '192.0.2.30/24', gateway: '192.0.2.1' }, ci_user: 'ops', server_key_ids: [3, 1] },
        ...{ cloud_config_id: 7, snippets_storage: 'local', start: true, state: 'testing', stack: 'development' },
      },
      errors: {},
    });
  });

  it('sends only what the source takes: no keys, user or cloud config for a container clone; no full clone for a volume', () => {
    const extras = { ci_user: 'ops', server_key_ids: [1], cloud_config_id: '7', full: true, storage: 'fast' };
    expect(deployBody({ ...blank, ...extras, source: '9100' }, templates).body).toEqual({ ...deployBody({ ...blank, source: '9100' }, templates).body, full: true, storage: 'fast' });
    const volume = deployBody({ ...blank, ...extras, source: VOLUME, volume: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst' }, templates);
    expect(volume.errors).toEqual({});
    expect(volume.body).toEqual({
      ...{ new_vmid: 301, name: 'web', source_volume: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst', storage: 'fast', server_key_ids: [1] },
      ...{ start: true, state: 'testing', stack: 'development' },
    });
  });

  it('names each wrong field as the server’s 400 does', () => {
    const form: DeployForm = {
      ...blank,
      ...{ source: VOLUME, volume: 'local:iso/debian.iso', new_vmid: '99', name: 'Web_1', storage: '', cores: '0', memory_mb: 'lots', disk_gb: '8' },
      ...{ network: true, bridge: 'eth0', vlan: '4095', dhcp: false, ip: '192.0.2.5', gateway: '192.0.2.256' },
    };
    expect(deployBody(form, templates).errors).toEqual({
      source_volume: 'must be a container template volume such as local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
      new_vmid: 'must be a whole number from 100 to 999,999,999',
      name: 'must be a DNS label: lower-case letters, digits and - (at most 63)',
      cores: 'must be from 1 to 128',
      memory_mb: 'must be a whole number from 64 to 4194304',
      storage: 'is needed with a disk size: the storage the root disk is made on',
      'network.bridge': 'must be a bridge such as vmbr0',
      'network.vlan': 'must be from 1 to 4094',
      'network.ip': 'must be an address a.b.c.d/nn',
      'network.gateway': 'must be an IPv4 address a.b.c.d',
    });
    expect(deployBody({ ...blank, cloud_config_id: '7', snippets_storage: '' }, templates).errors).toEqual({ snippets_storage: 'is needed with a cloud config: a storage with snippets content' });
    expect(deployBody({ ...blank, source: '555' }, templates).errors).toEqual({ source_vmid: 'choose a template or a container template volume' });
  });

  it('says the static address, or that DHCP gives it', () => {
    expect(addressText({ bridge: 'vmbr0', ip: '192.0.2.30/24', gateway: '192.0.2.1' })).toBe('192.0.2.30');
    expect(addressText({ bridge: 'vmbr0', ip: 'dhcp' })).toBe('DHCP (from your DHCP server; homefleet does not collect guest addresses yet)');
  });

  it('reads the failed step from the agent’s last words, or its refusal', () => {
    const output = 'qm clone 9000 301\n400 Parameter verification failed.\nhomefleet-agent: the deploy failed at: qm set 301 --cores 2 (exit 25); the half-made guest 301 was removed\n';
    expect(failedStep(output)).toEqual({ step: 'qm set 301 --cores 2', exit: 25, after: 'the half-made guest 301 was removed' });
    expect(failedStep('homefleet-agent: the deploy failed at: qm clone 9000 301 --name web (exit 25)')).toEqual({ step: 'qm clone 9000 301 --name web', exit: 25, after: '' });
    expect(failedStep('refused by the agent: invalid bridge\n')).toEqual({ refused: 'invalid bridge' });
    expect(failedStep(null)).toBeUndefined();
  });
});
