import { describe, expect, it } from 'vitest';
import { unredactedKeys } from './config-secrets.js';

describe('unredactedKeys', () => {
  it('finds a secret key whatever whitespace pads it (spaces, tabs, CR, no-break space)', () => {
    expect(unredactedKeys(' password: x\n')).toEqual(['password']);
    expect(unredactedKeys('cipassword\u00a0: x\n')).toEqual(['cipassword']);
    expect(unredactedKeys('cipassword\r: x\r\n')).toEqual(['cipassword']);
    expect(unredactedKeys('\tapi_token\t=\tabc\n')).toEqual(['api_token']);
    expect(unredactedKeys('\u00a0Secret-Key:hunter2')).toEqual(['Secret-Key']);
  });

  it('finds key=value secrets inside args and lxc.* values', () => {
    expect(unredactedKeys('args: -spice port=5900,password=hunter2\n')).toEqual(['args (password)']);
    expect(unredactedKeys('lxc.environment: DB_PASSWORD=hunter2\n')).toEqual(['lxc.environment (DB_PASSWORD)']);
    expect(unredactedKeys('lxc.environment.runtime: API_TOKEN = abc; OTHER=1\n')).toEqual(['lxc.environment.runtime (API_TOKEN)']);
    expect(unredactedKeys('args: -object secret,id=sec0,data=x -vnc :1,password-secret=hunter2\n')).toEqual(['args (password-secret)']);
  });

  it('accepts what the agent redacted, empty values, and pairs elsewhere', () => {
    const text = [
      'boot: order=scsi0',
      'cipassword: **REDACTED**',
      'cipassword\u00a0: **REDACTED**\r',
      ' password:',
      'args: -spice port=5900,password=**REDACTED**',
      'lxc.environment: DB_PASSWORD=**REDACTED**',
      'lxc.environment: DB_USER=app',
      'net0: virtio=BC:24:11:00:00:01,bridge=vmbr0',
      'description: rotate the token=monthly',
      'sshkeys: ssh-ed25519%20AAAA',
      '#password: not a key, a comment line',
    ].join('\n');
    expect(unredactedKeys(text)).toEqual([]);
  });
});
