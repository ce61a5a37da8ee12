import type { OperationStatus } from '../../contract/operations.js';
import type { OperationRow } from '../repo.js';
import type { OperationParts } from '../parts.js';
import type { HostRow } from '../../hosts/repo.js';

/**
 * A host in contact with the server, inside the transaction of that contact: a heartbeat, whose facts
 * are already written into `host`, or a command poll (GET /api/agent/commands).
 */
export interface Contact extends OperationParts {
  host: HostRow;
  now: number;
}

/**
 * One kind of command an agent receives, in the three steps every kind has: when it is due, what
 * delivering it changes, and how it reads in the answer. `P` is what waits for the host, `D` what
 * delivery made of it (a fresh receipt token, say).
 */
export interface CommandKind<C extends { type: string }, P, D = P> {
  /** What this contact says about commands of this kind delivered before (the new agent version beating). */
  settle?(contact: Contact): void;
  /** What waits for this host, read inside the contact's transaction; [] when nothing is due. */
  due(contact: Contact): readonly P[];
  /**
   * Hands one out, in the same transaction: after it, `due` no longer lists it (a command goes out
   * once). Undefined: it was not handed out but ended (a deploy whose server key was deleted meanwhile).
   */
  deliver(contact: Contact, pending: P): D | undefined;
  /** The command as the agent reads it in the answer. */
  render(delivered: D): C;
  /** Delivering one changes what the host page shows: host.status is announced with the heartbeat. */
  announcesStatus?: boolean;
  /** Run by the periodic sweep: commands of this kind that got no answer in time. */
  sweep?(parts: OperationParts, now: number): void;
  /** Handed out by the command poll too, not only in heartbeat answers (which the agent runs in the background). */
  polled?: boolean;
  /** The agent reports these at POST /api/agent/operations/:id/result. */
  takesResults?: boolean;
  /** What the end of one of these changes beyond its own row (a failed clone's instance removed), in the transaction that ends it. */
  ended?(parts: OperationParts, op: OperationRow, status: OperationStatus, now: number): void;
}

/** A kind as the table holds it: its pending and delivered types stay inside. */
export interface AgentCommandKind<C> {
  settle(contact: Contact): void;
  /** Delivers and renders every command of this kind due for the host in contact. */
  handOut(contact: Contact): C[];
  announcesStatus: boolean;
  sweep(parts: OperationParts, now: number): void;
  polled: boolean;
  takesResults: boolean;
  ended(parts: OperationParts, op: OperationRow, status: OperationStatus, now: number): void;
}

export function commandKind<C extends { type: string }, P, D = P>(kind: CommandKind<C, P, D>): AgentCommandKind<C> {
  return {
    settle: (contact) => kind.settle?.(contact),
    handOut: (contact) =>
      kind.due(contact).flatMap((pending) => {
        const delivered = kind.deliver(contact, pending);
        return delivered === undefined ? [] : [kind.render(delivered)];
      }),
    announcesStatus: kind.announcesStatus ?? false,
    sweep: (parts, now) => kind.sweep?.(parts, now),
    polled: kind.polled ?? false,
    takesResults: kind.takesResults ?? false,
    ended: (parts, op, status, now) => kind.ended?.(parts, op, status, now),
  };
}
