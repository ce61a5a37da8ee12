import type { Guest } from '../../../server/contract/hosts';
import type { GuestAction } from '../../../server/contract/operations';

/** Snapshot names as the server takes them (PRODUCT.md "Guest control through agents"). */
export const SNAPSHOT_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;

export interface GuestContext {
  production: boolean;
  hostOnline: boolean;
  /** An operation for this guest is pending or sent. */
  busy: boolean;
}

/**
 * The actions that make sense for a guest in its state, in menu order, and why they cannot be used now
 * (`blocked`). A template is only cloned; start is for a guest that is not running, shutdown, stop and
 * reboot for one that is; rebuild for any guest (it stops the guest itself); destroy only for a stopped
 * guest off the production stack (the server refuses the rest anyway: this keeps them from being offered).
 */
export function guestActions(guest: Pick<Guest, 'status' | 'template' | 'lock'>, ctx: GuestContext): { actions: GuestAction[]; blocked?: string } {
  const running = guest.status === 'running';
  const stopped = guest.status === 'stopped';
  const actions: GuestAction[] = guest.template
    ? ['clone']
    : [
        ...(running ? [] : (['start'] as const)),
        ...(stopped ? [] : (['shutdown', 'stop', 'reboot'] as const)),
        'snapshot',
        'rollback',
        'clone',
        // Offered on production too: the server says an administrator's force is needed, and the dialog offers it.
        'rebuild',
        ...(stopped && !ctx.production ? (['destroy'] as const) : []),
      ];
  const blocked = guest.lock
    ? `Locked (${guest.lock}): actions wait until the lock clears.`
    : !ctx.hostOnline
      ? 'The host is offline: actions wait until it reports again.'
      : ctx.busy
        ? 'An operation is already pending for this guest.'
        : undefined;
  return blocked ? { actions, blocked } : { actions };
}

/** "Stop", "Roll back": an action as a menu item or a button names it. */
export const actionLabel = (action: GuestAction): string => (action === 'rollback' ? 'Roll back' : `${action[0]!.toUpperCase()}${action.slice(1)}`);
