import { describe, expect, it } from 'vitest';
import { channelOf } from '../contract/versions.js';
import { offeredVersion, refusedBy, requestedVersion, settingsErrors, type NewestOf } from './channels.js';

// Shipped: 1.0.0 and 1.1.0 (stable), 1.2.0-beta.1 (beta).
const newest: NewestOf = (channel) => (channel === 'beta' ? '1.2.0-beta.1' : '1.1.0');
const SHIPPED = ['1.1.0', '1.2.0-beta.1', '1.0.0'];
const host = (over: Partial<{ agent_channel: 'stable' | 'beta'; agent_pin: string | null; agent_version: string }> = {}) => ({
  hostname: 'pve1',
  agent_channel: 'stable' as const,
  agent_pin: null,
  agent_version: '1.0.0',
  ...over,
});

describe('channelOf', () => {
  it('is beta for a version with a pre-release part, else stable (build metadata does not count)', () => {
    expect(channelOf('1.2.0-rc.1')).toBe('beta');
    expect(channelOf('1.2.0-beta.1+b7')).toBe('beta');
    expect(channelOf('1.2.0')).toBe('stable');
    expect(channelOf('1.2.0+b-7')).toBe('stable');
  });
});

describe('offeredVersion', () => {
  it('offers a stable host the newest stable version, a beta host the newest of all', () => {
    expect(offeredVersion(host(), newest)).toBe('1.1.0');
    expect(offeredVersion(host({ agent_channel: 'beta' }), newest)).toBe('1.2.0-beta.1');
  });

  it('offers nothing to a host that runs that version or a newer one', () => {
    expect(offeredVersion(host({ agent_version: '1.1.0' }), newest)).toBeUndefined();
    expect(offeredVersion(host({ agent_version: '1.2.0-beta.1' }), newest)).toBeUndefined();
  });

  it('never offers a pinned host anything, not even its pin', () => {
    expect(offeredVersion(host({ agent_pin: '1.0.0' }), newest)).toBeUndefined();
    expect(offeredVersion(host({ agent_pin: '1.1.0' }), newest)).toBeUndefined();
  });
});

describe('requestedVersion', () => {
  it('without a version: the pin, else the newest of the channel', () => {
    expect(requestedVersion(host(), undefined, newest)).toBe('1.1.0');
    expect(requestedVersion(host({ agent_channel: 'beta' }), undefined, newest)).toBe('1.2.0-beta.1');
    expect(requestedVersion(host({ agent_pin: '1.0.0' }), undefined, newest)).toBe('1.0.0');
  });

  it('refuses to move a pinned host anywhere but its pin, with a 409 naming the pin', () => {
    expect(requestedVersion(host({ agent_pin: '1.0.0' }), '1.0.0', newest)).toBe('1.0.0');
    expect(() => requestedVersion(host({ agent_pin: '1.0.0' }), '1.1.0', newest)).toThrow(
      expect.objectContaining({ status: 409, body: { error: 'host pve1 is pinned to agent 1.0.0: unpin it (agent_pin: null) before moving it to 1.1.0' } }),
    );
  });

  it('refuses a pre-release to a stable host, not to a beta one', () => {
    expect(() => requestedVersion(host(), '1.2.0-beta.1', newest)).toThrow(expect.objectContaining({ status: 409 }));
    expect(requestedVersion(host({ agent_channel: 'beta' }), '1.2.0-beta.1', newest)).toBe('1.2.0-beta.1');
    expect(requestedVersion(host({ agent_channel: 'beta' }), '1.0.0', newest)).toBe('1.0.0');
  });

  it('says so when the channel has no version at all', () => {
    expect(() => requestedVersion(host(), undefined, () => undefined)).toThrow(expect.objectContaining({ status: 409, body: { error: 'no agent release is available on the stable channel' } }));
  });
});

describe('settingsErrors', () => {
  it('takes no pin, or a shipped one of the channel', () => {
    expect(settingsErrors({ agent_channel: 'stable', agent_pin: null }, SHIPPED, true)).toEqual([]);
    expect(settingsErrors({ agent_channel: 'stable', agent_pin: '1.0.0' }, SHIPPED, true)).toEqual([]);
    expect(settingsErrors({ agent_channel: 'beta', agent_pin: '1.2.0-beta.1' }, SHIPPED, true)).toEqual([]);
  });

  it('names a pin this server does not ship, and what it ships', () => {
    expect(settingsErrors({ agent_channel: 'stable', agent_pin: '9.9.9' }, SHIPPED, true)).toEqual([
      { field: 'agent_pin', message: '9.9.9 is not an agent version this server ships (it ships 1.1.0, 1.2.0-beta.1, 1.0.0)' },
    ]);
  });

  it('keeps a stable host off a beta pin, naming the field that was given', () => {
    expect(settingsErrors({ agent_channel: 'stable', agent_pin: '1.2.0-beta.1' }, SHIPPED, true)).toEqual([
      { field: 'agent_pin', message: '1.2.0-beta.1 is a beta version: set agent_channel to beta to pin the host to it' },
    ]);
    expect(settingsErrors({ agent_channel: 'stable', agent_pin: '1.2.0-beta.1' }, SHIPPED, false)).toEqual([
      { field: 'agent_channel', message: 'the host is pinned to the beta version 1.2.0-beta.1: unpin it or pin a stable version first' },
    ]);
  });

  it('does not refuse other settings of a host whose pin is no longer shipped', () => {
    expect(settingsErrors({ agent_channel: 'stable', agent_pin: '0.9.0' }, SHIPPED, false)).toEqual([]);
  });
});

describe('refusedBy', () => {
  it('calls off a pending upgrade that a pin or the stable channel no longer allows', () => {
    expect(refusedBy({ agent_channel: 'stable', agent_pin: '1.0.0' }, '1.1.0')).toBe(true);
    expect(refusedBy({ agent_channel: 'stable', agent_pin: '1.0.0' }, '1.0.0')).toBe(false);
    expect(refusedBy({ agent_channel: 'stable', agent_pin: null }, '1.2.0-beta.1')).toBe(true);
    expect(refusedBy({ agent_channel: 'beta', agent_pin: null }, '1.2.0-beta.1')).toBe(false);
    expect(refusedBy({ agent_channel: 'stable', agent_pin: null }, '1.1.0')).toBe(false);
  });
});
