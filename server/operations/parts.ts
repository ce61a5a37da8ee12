import { randomUUID } from 'node:crypto';
import type { AuditLog } from '../audit.js';
import { conflict } from '../errors.js';
import type { AppContext } from '../context.js';
import type { HostRepo, HostRow } from '../hosts/repo.js';
import type { InstanceService } from '../registry/service.js';
import type { Launchables } from './launch.js';
import type { CommandChannel } from './command-channel.js';
import type { NewOperation, OperationRepo } from './repo.js';
import type { ScriptSource } from './script-source.js';
import { presentOperation } from './view.js';
import { youngCollectionEvery } from '../memory.js';

/**
 * What operations work with, handed in by the composition root (server/services.ts): their own repo,
 * and of hosts only the rows a command goes to (upgrades and removals move them) and two functions.
 */
export interface OperationParts {
  ctx: AppContext;
  /** Written inside the transaction of the change an entry records. */
  audit: AuditLog;
  /** Every command an agent receives. */
  ops: OperationRepo;
  /** The hosts' rows (server/hosts/repo.ts). */
  repo: HostRepo;
  /** A heartbeat within the last three intervals (server/hosts/present.ts). */
  isOnline: (host: HostRow, now: number) => boolean;
  /** host.status with the host as it is now; inside a transaction it is heard once that commits. */
  announceStatus: (hostId: number) => void;
  /** The registry: clones, deploys and destroys change it through its own rules. */
  instances: InstanceService;
  /** Saved server keys and cloud configs by id: a deploy names them, its command carries them. */
  launchables: Launchables;
  /** Scripts by id (server/scripts): a script run names one, its command carries its body. */
  scripts: ScriptSource;
}

/**
 * Operations come in bursts (a campaign's wave: 50 commands queued, handed to 50 waiting polls, 50
 * results), each leaving 200–300 KB of short-lived garbage. V8 alone collects the young generation
 * about every 16 MB allocated, whatever is in flight: ~3 MB survive each time (0.5 MB at the end of
 * a turn) and are promoted (23 MB for 500 operations, dead by the next full collection), and every
 * page of the grown young generation is touched. A scavenge after every 16 changes of operations,
 * once the turn has answered its requests: 500 operations in waves of 50 raised RSS by 50 MB (median
 * of 3), now 35 (test/bench/campaigns.bench.ts), for ~30 more scavenges of 1–3 ms each.
 */
const collectAfterBurst = youngCollectionEvery(16);

/** operation.updated with the operation as it is now (never its output); inside a transaction it is heard once that commits. */
export function announceOperation({ ctx, ops }: Pick<OperationParts, 'ctx' | 'ops'>, id: string | undefined): void {
  const row = id === undefined ? undefined : ops.byId(id);
  if (!row) return;
  ctx.bus.publish('operation.updated', presentOperation(row, false));
  collectAfterBurst();
}

/** The host takes commands: it reports (online) and is not being removed. */
export function requireReachable(parts: OperationParts, host: HostRow, now: number): void {
  if (host.state === 'deleted') throw conflict('host is deleted');
  if (host.state === 'deleting') throw conflict('host is being deleted');
  if (!parts.isOnline(host, now)) throw conflict('host is offline');
}

/**
 * A new pending operation for a host, inside the caller's transaction: inserted, announced, and its
 * host's waiting command poll woken once it commits. Answers its id.
 */
export function queueOperation(parts: Pick<OperationParts, 'ctx' | 'ops'>, channel: CommandChannel, op: Omit<NewOperation, 'id'>): string {
  const id = randomUUID();
  parts.ops.insert({ id, ...op });
  announceOperation(parts, id);
  parts.ctx.afterCommit(() => channel.notify(op.host_id));
  return id;
}
