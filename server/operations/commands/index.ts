import type { AgentCommand } from '../../contract/hosts.js';
import type { OperationType } from '../../contract/operations.js';
import type { OperationParts } from '../parts.js';
import { deploy } from './deploy.js';
import { download } from './download.js';
import { guestAction } from './guest-action.js';
import { logs } from './logs.js';
import { script } from './script.js';
import type { AgentCommandKind, Contact } from './types.js';
import { uninstall } from './uninstall.js';
import { upgrade } from './upgrade.js';
import { upload } from './upload.js';

export type { AgentCommand };

type CommandTable = { [K in AgentCommand['type']]: AgentCommandKind<Extract<AgentCommand, { type: K }>> };

/** Which code hands out each kind of agent command; the heartbeat and the sweep know commands only by this table. */
export const AGENT_COMMANDS: CommandTable = {
  uninstall,
  upgrade,
  'guest.action': guestAction,
  logs,
  deploy,
  download,
  upload,
  script,
};

/** The kind of an operation's type (the operation types are the command types). */
export const kindOf = (type: OperationType): AgentCommandKind<AgentCommand> => AGENT_COMMANDS[type] as AgentCommandKind<AgentCommand>;

const kinds: AgentCommandKind<AgentCommand>[] = Object.values(AGENT_COMMANDS);

/**
 * Inside a contact's transaction: what the host reports settles earlier commands, then every command
 * due is delivered and rendered, in the table's order. `due` reads the host's row as the contact
 * found it, so a command settled now is not also handed out now.
 */
export function commandsFor(contact: Contact): { commands: AgentCommand[]; announcesStatus: boolean } {
  for (const kind of kinds) kind.settle(contact);
  const commands: AgentCommand[] = [];
  let announcesStatus = false;
  for (const kind of kinds) {
    const handed = kind.handOut(contact);
    commands.push(...handed);
    if (handed.length && kind.announcesStatus) announcesStatus = true;
  }
  return { commands, announcesStatus };
}

/**
 * Inside a command poll's transaction: every command due that the poll hands out (guest actions,
 * deploys, log requests, downloads, pushes and scripts; upgrades and removals replace the agent itself, so they come only with a heartbeat).
 */
export function polledCommandsFor(contact: Contact): AgentCommand[] {
  return kinds.filter((kind) => kind.polled).flatMap((kind) => kind.handOut(contact));
}

/** Commands that got no answer in time, each kind by its own rule. */
export function sweepCommands(parts: OperationParts, now: number): void {
  for (const kind of kinds) kind.sweep(parts, now);
}
