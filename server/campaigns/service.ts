import { nameOf } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Campaign, CampaignPlan, CampaignSummary } from '../contract/campaigns.js';
import { ENDED_CAMPAIGN_STATUSES } from '../contract/campaigns.js';
import type { CampaignRequest } from '../contract/inputs/campaigns.js';
import { FINISHED_STATUSES } from '../contract/operations.js';
import { conflict, HttpError, notFound } from '../errors.js';
import { currentContext, runAs, type Actor } from '../http/request-context.js';
import type { Task } from '../tasks.js';
import { createEngine } from './engine.js';
import type { CampaignDeps, CampaignParts, Who } from './parts.js';
import { planCampaign, resolveStep } from './plan.js';
import { presentCampaign, presentSummary } from './present.js';
import { createCampaignRepo, type CampaignRow } from './repo.js';

/**
 * How often the engine looks at campaigns with nothing announced: targets waiting for a maintenance
 * window to open (hosts coming back, operations ending and pauses ending wake it at once).
 */
const IDLE_MS = 10_000;

/** What the step does, in a few words for the change log: "reboot", "script 3", "agent upgrade to 1.4.0". */
function stepWords(step: CampaignRow['step']): string {
  const s = JSON.parse(step) as CampaignRequest['step'];
  if (s.type === 'guest.action') return s.action;
  if (s.type === 'script') return `script ${s.script_id}`;
  return s.version === undefined ? 'agent upgrade along each host’s channel' : `agent upgrade to ${s.version}`;
}

export type CampaignService = ReturnType<typeof createCampaignService>;

/**
 * Campaigns (PRODUCT.md): one step over targets frozen at creation, in waves. The engine
 * (engine.ts) runs on the kernel's task runner, each step of it one transaction per campaign.
 */
export function createCampaignService(ctx: AppContext, deps: CampaignDeps) {
  const repo = createCampaignRepo(ctx.db);
  const parts: CampaignParts = { ...deps, ctx, repo };
  const engine = createEngine(parts);
  const { audit } = deps;
  let task: Task | undefined;
  /**
   * Operations of running targets announced as ended since the engine last looked: a look reads only
   * those. Every IDLE_MS (and at start-up, when this is empty though operations may have ended while
   * the server was down) a look reads them all.
   */
  const ended = new Set<string>();
  let fullLookAt = 0;
  /**
   * The campaign page's answer, kept until the campaign next changes (500 targets are read and shaped
   * once), and its JSON once it is first sent: 112 KiB for 500 targets, encoded again on every read before.
   */
  const presented = new Map<number, { campaign: Campaign; body?: Buffer }>();

  const summaryOf = (row: CampaignRow): CampaignSummary => presentSummary(row, repo.counts(row.id));
  const announce = (row: CampaignRow) => {
    presented.delete(row.id);
    ctx.bus.publish('campaign.updated', summaryOf(row));
  };

  function require(id: number): CampaignRow {
    const row = repo.byId(id);
    if (!row) throw notFound('campaign not found');
    return row;
  }
  const kept = (id: number) => {
    let page = presented.get(id);
    if (page) return page;
    const row = require(id);
    const now = ctx.clock.now();
    const hostnames = new Map<number, string | null>();
    const hostnameOf = (hostId: number) => {
      if (!hostnames.has(hostId)) hostnames.set(hostId, deps.fleet.host(hostId, now)?.hostname ?? null);
      return hostnames.get(hostId)!;
    };
    page = { campaign: presentCampaign(row, repo.counts(id), repo.targets(id), hostnameOf) };
    presented.set(id, page);
    // A few pages open at once are what this is for; more are read again.
    if (presented.size > 20) presented.delete(presented.keys().next().value!);
    return page;
  };
  const read = (id: number): Campaign => kept(id).campaign;
  const subject = (c: Pick<CampaignRow, 'id' | 'name'>) => ({ type: 'campaign', id: String(c.id), name: c.name });

  const planTx = ctx.transaction((request: CampaignRequest, now: number): CampaignPlan => planCampaign(parts, request, resolveStep(parts, request.step), now));

  const createTx = ctx.transaction((request: CampaignRequest, actor: Actor, now: number): number => {
    const step = resolveStep(parts, request.step);
    const plan = planCampaign(parts, request, step, now);
    if (plan.waves.length === 0) throw new HttpError(409, { error: 'nothing to run: every target is skipped', skipped: plan.skipped });
    const targets = [
      ...plan.waves.flatMap((wave, w) => wave.map((t) => ({ ...t, wave: w + 1, status: 'pending' as const, reason: null }))),
      ...plan.skipped.map((t) => ({ ...t, wave: 0, status: 'skipped' as const })),
    ].map((t, seq) => ({ ...t, seq }));
    const who = nameOf(actor);
    const id = repo.insert(
      {
        name: request.name,
        target: JSON.stringify(request.target),
        step: JSON.stringify(step),
        wave_size: request.wave_size,
        pause_s: request.pause_s,
        max_failures: request.max_failures,
        respect_maintenance: request.respect_maintenance ? 1 : 0,
        window_wait_h: request.window_wait_h,
        status: 'running',
        waves: plan.waves.length,
        created_by: who === 'someone' ? null : who,
        actor: JSON.stringify(actor),
        created_at: now,
      },
      targets,
    );
    const row = require(id);
    audit.write({
      action: 'campaign.create',
      subject: subject(row),
      summary: `${nameOf()} started campaign ${id} “${row.name}”: ${stepWords(row.step)} of ${targets.length - plan.skipped.length} targets in ${plan.waves.length} waves of ${request.wave_size}${plan.skipped.length ? `, ${plan.skipped.length} skipped` : ''}`,
      detail: { target: request.target, step: JSON.parse(row.step), wave_size: request.wave_size, pause_s: request.pause_s, max_failures: request.max_failures, skipped: plan.skipped.length },
    });
    // The first wave starts with the campaign, in the same transaction: its operations are queued by the time the 201 is sent.
    engine.advance(row, now);
    announce(row);
    return id;
  });

  /** One step of the engine for one campaign, in its creator's name (the operations it queues are theirs). */
  const advanceTx = ctx.transaction((id: number, now: number, full: boolean): number | null => {
    const row = repo.byId(id);
    if (!row) return null;
    if (engine.advance(row, now, full ? undefined : (operationId) => ended.delete(operationId))) announce(row);
    return row.status === 'running' ? row.next_wave_at : null;
  });

  const changeTx = ctx.transaction((id: number, to: 'pause' | 'resume' | 'cancel', who: Who, managesHosts: boolean, now: number) => {
    const row = require(id);
    if (ENDED_CAMPAIGN_STATUSES.includes(row.status)) throw conflict('the campaign has already ended');
    if (to === 'pause' && row.status !== 'running') throw conflict('the campaign is not running');
    if (to === 'resume' && row.status !== 'paused') throw conflict('the campaign is not paused');
    if (to === 'cancel') engine.cancel(row, who, managesHosts, now);
    else {
      row.status = to === 'pause' ? 'paused' : 'running';
      repo.setCampaign(row);
    }
    const did = { pause: 'paused', resume: 'resumed', cancel: 'cancelled' }[to];
    audit.write({ action: `campaign.${to}`, subject: subject(row), summary: `${nameOf()} ${did} campaign ${id} “${row.name}”`, detail: { status: row.status } });
    announce(row);
  });

  /** The engine's task: every campaign with work in it, then to sleep until the next pause ends (or IDLE_MS). */
  function tick(): void {
    const now = ctx.clock.now();
    let next = now + IDLE_MS;
    const full = Date.now() - fullLookAt >= IDLE_MS;
    if (full) {
      fullLookAt = Date.now();
      ended.clear();
    }
    for (const id of repo.active()) {
      const row = repo.byId(id)!;
      const due = runAs(JSON.parse(row.actor) as Actor, () => advanceTx(id, now, full));
      if (due !== null && due < next) next = due;
    }
    // The campaign's times are the app clock's; the runner's timers are the real clock's.
    task?.reschedule(new Date(Date.now() + Math.max(0, next - now)));
  }
  const wake = () => task?.reschedule(new Date());

  return {
    plan: (request: CampaignRequest): CampaignPlan => planTx(request, ctx.clock.now()),
    create: (request: CampaignRequest): Campaign => read(createTx(request, currentContext().actor, ctx.clock.now())),
    list: (): CampaignSummary[] => repo.list(200).map(summaryOf),
    /** GET /api/campaigns/:id's body: the campaign as JSON, the same bytes until it next changes. */
    json(id: number): Buffer {
      const page = kept(id);
      return (page.body ??= Buffer.from(JSON.stringify(page.campaign)));
    },
    change(id: number, to: 'pause' | 'resume' | 'cancel', who: Who, managesHosts: boolean): Campaign {
      changeTx(id, to, who, managesHosts, ctx.clock.now());
      if (to === 'resume') wake();
      return read(id);
    },

    /** Registers the engine with the task runner; an operation's end or a host's return wakes it. */
    start(): void {
      // At start-up first: campaigns that were running when the server stopped go on where they were.
      task = ctx.tasks.every('campaigns', IDLE_MS, tick, { first: new Date() });
      ctx.bus.on('operation.updated', (op) => {
        if (!FINISHED_STATUSES.includes(op.status) || repo.campaignOfOperation(op.id) === undefined) return;
        ended.add(op.id);
        wake();
      });
      ctx.bus.on('host.status', wake);
      // A guest's lock cleared shows in a heartbeat.
      ctx.bus.on('host.heartbeat', (host) => {
        if (repo.waitingOn(host.id)) wake();
      });
    },
  };
}
