import type { CampaignStep } from '../contract/inputs/campaigns.js';
import { DISRUPTIVE_ACTIONS, FINISHED_STATUSES } from '../contract/operations.js';
import { HttpError } from '../errors.js';
import type { CampaignParts, Who } from './parts.js';
import type { CampaignRow, TargetRow } from './repo.js';

const HOUR_MS = 3_600_000;

/** Work a maintenance window is waited for: everything but a guest's start or snapshot (PRODUCT.md's disruptive actions). */
const disruptive = (step: CampaignStep) => step.type !== 'guest.action' || DISRUPTIVE_ACTIONS.includes(step.action);

export type Engine = ReturnType<typeof createEngine>;

/**
 * The campaign engine's steps, each run inside the caller's transaction on a campaign's row read in
 * it: what the operations of the running targets ended as, waiting targets tried again, the next
 * wave started once the last one is done and its pause has passed. All of its state is the
 * campaign's row and its targets' rows, so a restarted server goes on where it was.
 */
export function createEngine(parts: CampaignParts) {
  const { repo, fleet, launch } = parts;

  /** Why the target cannot start now, in words, or undefined when it can. */
  function blocked(c: CampaignRow, step: CampaignStep, t: TargetRow, now: number): string | undefined {
    const host = fleet.host(t.host_id!, now);
    if (!host?.online) return 'host is offline';
    if (c.respect_maintenance === 1 && disruptive(step) && fleet.maintenanceClosed(host.id, now)) return "outside the host's maintenance window";
    const lock = t.vmid === null ? null : fleet.guest(host.id, t.vmid)?.lock;
    if (lock) return `guest is locked (${lock})`;
    return undefined;
  }

  /** Queues the target's operation through the feature that owns it; answers its id. */
  function queue(c: CampaignRow, step: CampaignStep, t: TargetRow, who: Who): string {
    const hostId = t.host_id!;
    if (step.type === 'agent.upgrade') return launch.upgrade(hostId, step.version!, who);
    if (step.type === 'script') return launch.script(hostId, t.vmid, step.script_id, step.timeout_s, who).operation_id;
    const { type: _type, ...body } = step;
    return launch.guestAction(hostId, t.vmid!, { ...body, reason: body.reason ?? `campaign ${c.id} “${c.name}”` }, who).operation_id;
  }

  /**
   * Starts one target: its operation queued (`running`), or `waiting` while its host is offline,
   * its guest locked or its host outside a maintenance window (up to `window_wait_h`, then
   * `skipped`), or `failed` with the refusal's words (counted). Answers whether the target's row changed.
   */
  function start(c: CampaignRow, step: CampaignStep, t: TargetRow, now: number): boolean {
    const host = fleet.host(t.host_id!, now);
    if (!host || host.state !== 'active') {
      repo.setTarget({ ...t, status: 'skipped', reason: host?.state === 'deleting' ? 'host is being deleted' : 'host is deleted', finished_at: now });
      return true;
    }
    const reason = blocked(c, step, t, now);
    if (reason) {
      const since = t.waiting_since ?? now;
      if (now - since >= c.window_wait_h * HOUR_MS) repo.setTarget({ ...t, status: 'skipped', reason: `${reason} (waited ${c.window_wait_h} h)`, finished_at: now });
      else if (t.status !== 'waiting' || t.reason !== reason) repo.setTarget({ ...t, status: 'waiting', reason, waiting_since: since });
      else return false;
      return true;
    }
    try {
      const operationId = queue(c, step, t, { actor: c.created_by });
      repo.setTarget({ ...t, status: 'running', reason: null, operation_id: operationId, started_at: now });
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      c.failures += 1;
      repo.setTarget({ ...t, status: 'failed', reason: err.message, started_at: now, finished_at: now });
    }
    return true;
  }

  /**
   * The running targets whose operations ended: succeeded, failed (counted) or cancelled. `ended`
   * (when given) says which operations may have ended since the last look: only those are read.
   */
  function settle(c: CampaignRow, now: number, ended?: (operationId: string) => boolean): boolean {
    let changed = false;
    for (const t of repo.inStatus(c.id, 'running')) {
      if (ended && !ended(t.operation_id!)) continue;
      const op = launch.operation(t.operation_id!);
      if (op && !FINISHED_STATUSES.includes(op.status)) continue;
      changed = true;
      if (op?.status === 'succeeded') repo.setTarget({ ...t, status: 'succeeded', reason: null, finished_at: now });
      else if (op?.status === 'cancelled') repo.setTarget({ ...t, status: 'cancelled', reason: 'its operation was cancelled', finished_at: now });
      else {
        c.failures += 1;
        const reason = !op ? 'its operation is gone' : op.status === 'expired' ? 'the agent did not answer in time (expired)' : `failed${op.exit_code === null ? '' : ` (exit ${op.exit_code})`}`;
        repo.setTarget({ ...t, status: 'failed', reason, finished_at: now });
      }
    }
    return changed;
  }

  /** "when failures exceed max_failures the campaign stops (failed), the rest skipped" */
  function stopOnFailures(c: CampaignRow, now: number): boolean {
    if (c.failures <= c.max_failures) return false;
    c.status = 'failed';
    c.finished_at = now;
    c.next_wave_at = null;
    repo.endUnrun(c.id, 'skipped', `the campaign stopped after ${c.failures} failure${c.failures === 1 ? '' : 's'} (max_failures ${c.max_failures})`, now);
    return true;
  }

  /**
   * One step of the engine for campaign `c` (read in the caller's transaction; changed in place and
   * written back when anything moved). Answers whether anything changed. `ended`: as for settle.
   */
  function advance(c: CampaignRow, now: number, ended?: (operationId: string) => boolean): boolean {
    const step = JSON.parse(c.step) as CampaignStep;
    let changed = settle(c, now, ended);
    if (c.status === 'running' && stopOnFailures(c, now)) changed = true;
    if (c.status !== 'running') {
      if (changed) repo.setCampaign(c);
      return changed;
    }
    for (;;) {
      if (c.current_wave > 0) {
        const wave = repo.targetsOfWave(c.id, c.current_wave);
        for (const t of wave) if (t.status === 'waiting' && start(c, step, t, now)) changed = true;
        if (stopOnFailures(c, now)) break;
        if (repo.targetsOfWave(c.id, c.current_wave).some((t) => t.status === 'waiting' || t.status === 'running' || t.status === 'pending')) break;
      }
      if (c.current_wave >= c.waves) {
        c.status = 'succeeded';
        c.finished_at = now;
        c.next_wave_at = null;
        changed = true;
        break;
      }
      // "the next wave starts when every operation of the previous one has finished and pause_s has passed"
      if (c.current_wave > 0 && c.pause_s > 0) {
        if (c.next_wave_at === null) {
          c.next_wave_at = now + c.pause_s * 1000;
          changed = true;
        }
        if (now < c.next_wave_at) break;
      }
      c.current_wave += 1;
      c.next_wave_at = null;
      changed = true;
      for (const t of repo.targetsOfWave(c.id, c.current_wave)) if (t.status === 'pending') start(c, step, t, now);
      if (stopOnFailures(c, now)) break;
    }
    if (changed) repo.setCampaign(c);
    return changed;
  }

  /**
   * Cancel: pending operations of the running targets are cancelled with it (the agent never gets
   * them), operations already sent finish and are settled as usual; targets not yet run are `cancelled`.
   */
  function cancel(c: CampaignRow, who: Who, managesHosts: boolean, now: number): void {
    settle(c, now);
    for (const t of repo.inStatus(c.id, 'running')) {
      if (launch.operation(t.operation_id!)?.status !== 'pending') continue;
      try {
        launch.cancel(t.operation_id!, who, managesHosts);
        repo.setTarget({ ...t, status: 'cancelled', reason: 'cancelled with the campaign', finished_at: now });
      } catch (err) {
        // Sent in the meantime, or an upgrade that only hosts.manage calls off: it runs to its end.
        if (!(err instanceof HttpError)) throw err;
      }
    }
    repo.endUnrun(c.id, 'cancelled', 'the campaign was cancelled', now);
    c.status = 'cancelled';
    c.finished_at = now;
    c.next_wave_at = null;
    repo.setCampaign(c);
  }

  return { advance, cancel };
}
