import { describe, expect, it } from 'vitest';
import { guestActions } from './guestActions';

const ready = { production: false, hostOnline: true, busy: false };
const guest = (status: string, extra: { template?: boolean; lock?: string | null } = {}) => ({ status, template: false, lock: null, ...extra });

describe('guestActions', () => {
  it('offers no start on a running guest, and no destroy; rebuild, which stops it itself', () => {
    expect(guestActions(guest('running'), ready)).toEqual({ actions: ['shutdown', 'stop', 'reboot', 'snapshot', 'rollback', 'clone', 'rebuild'] });
  });

  it('offers no shutdown, stop or reboot on a stopped guest; destroy only off production, rebuild on both', () => {
    expect(guestActions(guest('stopped'), ready)).toEqual({ actions: ['start', 'snapshot', 'rollback', 'clone', 'rebuild', 'destroy'] });
    expect(guestActions(guest('stopped'), { ...ready, production: true }).actions).toEqual(['start', 'snapshot', 'rollback', 'clone', 'rebuild']);
  });

  it('offers a guest in another state (paused) both start and stop, never destroy', () => {
    expect(guestActions(guest('paused'), ready).actions).toEqual(['start', 'shutdown', 'stop', 'reboot', 'snapshot', 'rollback', 'clone', 'rebuild']);
  });

  it('offers a template nothing but clone', () => {
    expect(guestActions(guest('stopped', { template: true }), ready)).toEqual({ actions: ['clone'] });
  });

  it('says why a locked guest, an offline host or a pending operation blocks the actions, the lock first', () => {
    expect(guestActions(guest('running', { lock: 'backup' }), { ...ready, hostOnline: false }).blocked).toBe('Locked (backup): actions wait until the lock clears.');
    expect(guestActions(guest('running'), { ...ready, hostOnline: false }).blocked).toBe('The host is offline: actions wait until it reports again.');
    expect(guestActions(guest('running'), { ...ready, busy: true }).blocked).toBe('An operation is already pending for this guest.');
  });
});
