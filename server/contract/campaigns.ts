import { liveEvent } from './events.js';
import type { CampaignStep, CampaignTargetSpec } from './inputs/campaigns.js';

export type { CampaignStep, CampaignTargetSpec };

export const CAMPAIGN_STATUSES = ['running', 'paused', 'succeeded', 'failed', 'cancelled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
/** A campaign that changes no more (operations of its last wave may still be finishing). */
export const ENDED_CAMPAIGN_STATUSES: readonly CampaignStatus[] = ['succeeded', 'failed', 'cancelled'];

/**
 * A frozen target's course: `pending` until its wave starts; then `waiting` (its host is offline,
 * the guest locked, or outside the host's maintenance window) or `running` (its operation queued);
 * then `succeeded` or `failed` as its operation ended. `skipped` (with the reason) when it was
 * never run: at creation, after waiting `window_wait_h`, or when the campaign stopped; `cancelled`
 * when the campaign was cancelled before it ran (or its pending operation was cancelled with it).
 */
export const TARGET_STATUSES = ['pending', 'waiting', 'running', 'succeeded', 'failed', 'skipped', 'cancelled'] as const;
export type CampaignTargetStatus = (typeof TARGET_STATUSES)[number];

/** One target as the dry run lists it: a guest (`vmid`), or a host itself (`vmid` null: an agent upgrade, a host script). */
export interface PlannedTarget {
  /** null when no host reports the guest. */
  host_id: number | null;
  vmid: number | null;
  name: string;
}

export interface SkippedTarget extends PlannedTarget {
  reason: string;
}

/** `POST /api/campaigns?dry_run=true`: what the campaign would run, wave by wave, and what it would skip. */
export interface CampaignPlan {
  waves: PlannedTarget[][];
  skipped: SkippedTarget[];
}

export interface CampaignTarget extends PlannedTarget {
  /** 1-based; 0 for a target skipped when the campaign was made. */
  wave: number;
  status: CampaignTargetStatus;
  /** Why it waits, was skipped or failed; null otherwise. */
  reason: string | null;
  operation_id: string | null;
  started_at: string | null;
  finished_at: string | null;
}

/** How many targets are in each status. */
export type CampaignCounts = Record<CampaignTargetStatus, number>;

/** A campaign as `GET /api/campaigns` lists it and `campaign.updated` carries it. */
export interface CampaignSummary {
  id: number;
  name: string;
  status: CampaignStatus;
  target: CampaignTargetSpec;
  step: CampaignStep;
  wave_size: number;
  pause_s: number;
  max_failures: number;
  respect_maintenance: boolean;
  window_wait_h: number;
  /** The wave running (or the last one that ran); 0 before the first. */
  current_wave: number;
  waves: number;
  /** When the next wave starts (the pause after the last one), while one is due. */
  next_wave_at: string | null;
  counts: CampaignCounts;
  failures: number;
  created_by: string | null;
  created_at: string;
  finished_at: string | null;
  /** From creation to its end: how long it took (null while it runs). */
  duration_s: number | null;
}

/** `GET /api/campaigns/:id` and the 201 of `POST /api/campaigns`: the summary and every frozen target. */
export interface Campaign extends CampaignSummary {
  targets: CampaignTarget[];
}

export const campaignEvents = {
  'campaign.updated': liveEvent<CampaignSummary>('fleet.read'),
};
