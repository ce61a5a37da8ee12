import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkCloudConfig, MAX_CLOUD_CONFIG_BYTES } from './cloud-config.js';

describe('checkCloudConfig', () => {
  it('takes cloud-init user-data and answers its size and SHA-256', async () => {
    const body = '#cloud-config\npackage_update: true\npackages: [curl, qemu-guest-agent]\nruncmd:\n  - [systemctl, enable, --now, qemu-guest-agent]\n';
    expect(await checkCloudConfig(body)).toEqual({ size: Buffer.byteLength(body), sha256: createHash('sha256').update(body).digest('hex') });
    expect(await checkCloudConfig('#cloud-config\r\nhostname: a\r\n')).toHaveProperty('sha256');
    expect(await checkCloudConfig('#cloud-config\n')).toHaveProperty('sha256');
  });

  it('takes exactly 64 KiB and refuses one byte more', async () => {
    const pad = (n: number) => '#cloud-config\n# ' + 'x'.repeat(n - '#cloud-config\n# '.length);
    expect(await checkCloudConfig(pad(MAX_CLOUD_CONFIG_BYTES))).toHaveProperty('size', MAX_CLOUD_CONFIG_BYTES);
    expect(await checkCloudConfig(pad(MAX_CLOUD_CONFIG_BYTES + 1))).toEqual({ invalid: 'must be at most 64 KiB' });
    // Counted in bytes, not characters.
    expect(await checkCloudConfig('#cloud-config\n# ' + 'é'.repeat(MAX_CLOUD_CONFIG_BYTES / 2))).toEqual({ invalid: 'must be at most 64 KiB' });
  });

  it.each([
    ['no header', 'hostname: a\n'],
    ['a header not on the first line', '\n#cloud-config\n'],
    ['a header with more on its line', '#cloud-config # mine\n'],
    ['a shell script', '#!/bin/sh\necho hi\n'],
  ])('refuses %s', async (_what, body) => {
    expect(await checkCloudConfig(body)).toEqual({ invalid: 'must start with the line #cloud-config' });
  });

  it.each([
    ['bad indentation', '#cloud-config\na:\n  b: 1\n c: 2\n'],
    ['an unclosed flow', '#cloud-config\npackages: [curl\n'],
    ['a duplicate key', '#cloud-config\nhostname: a\nhostname: b\n'],
    ['too many aliases (billion laughs)', '#cloud-config\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n'],
  ])('refuses YAML that does not parse: %s', async (_what, body) => {
    expect(await checkCloudConfig(body)).toEqual({ invalid: expect.stringMatching(/^is not valid YAML/) });
  });

  it('refuses flow collections nested more than 64 deep before parsing (30,000 took the parser half a second); brackets in quotes and comments do not count', async () => {
    const nested = (n: number) => '#cloud-config\na: ' + '['.repeat(n) + ']'.repeat(n) + '\n';
    expect(await checkCloudConfig(nested(30_000))).toEqual({ invalid: 'is nested too deeply (more than 64 levels of [ ] or { })' });
    expect(await checkCloudConfig(nested(65))).toEqual({ invalid: 'is nested too deeply (more than 64 levels of [ ] or { })' });
    expect(await checkCloudConfig(nested(64))).toMatchObject({ size: expect.any(Number) });
    const quoted = `#cloud-config\nruncmd:\n  - "echo ${'['.repeat(100)}"\n  - 'echo ${'{'.repeat(100)}'\n# ${'['.repeat(100)}\n`;
    expect(await checkCloudConfig(quoted)).toMatchObject({ size: quoted.length });
  });

  it('refuses a document that is not a mapping', async () => {
    expect(await checkCloudConfig('#cloud-config\n- a\n- b\n')).toEqual({ invalid: 'must be a YAML mapping of cloud-config keys' });
  });

  it.each([
    ['at the top', '#cloud-config\nssh_authorized_keys:\n  - ssh-ed25519 AAAA x\n'],
    ['under users', '#cloud-config\nusers:\n  - name: bob\n    ssh_authorized_keys: [ssh-ed25519 AAAA]\n'],
    ['ssh_keys', '#cloud-config\nssh_keys:\n  rsa_private: x\n'],
    ['deep in lists and maps', '#cloud-config\na:\n  - b:\n      - - c:\n            d: {SSH_Authorized_Keys: []}\n'],
    ['quoted', '#cloud-config\n"ssh_authorized_keys": []\n'],
    ['behind an alias', '#cloud-config\nx: &k {ssh_keys: {}}\ny: *k\n'],
  ])('refuses ssh_authorized_keys or ssh_keys %s', async (_what, body) => {
    expect(await checkCloudConfig(body)).toEqual({ invalid: expect.stringMatching(/^must not hold ssh_(authorized_)?keys: server keys are chosen at deploy/) });
  });

  it('takes the words as values', async () => {
    expect(await checkCloudConfig('#cloud-config\nwrite_files:\n  - path: /etc/motd\n    content: ssh_authorized_keys ssh_keys\n')).toHaveProperty('sha256');
  });
});
