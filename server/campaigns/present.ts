import type { Campaign, CampaignCounts, CampaignSummary, CampaignTarget } from '../contract/campaigns.js';
import type { CampaignStep, CampaignTargetSpec } from '../contract/inputs/campaigns.js';
import { isoMillis } from '../time.js';
import type { CampaignRow, TargetRow } from './repo.js';

const iso = (ms: number | null) => (ms === null ? null : isoMillis(ms));

/** The campaign as the list and `campaign.updated` show it. */
export function presentSummary(row: CampaignRow, counts: CampaignCounts): CampaignSummary {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    target: JSON.parse(row.target) as CampaignTargetSpec,
    step: JSON.parse(row.step) as CampaignStep,
    wave_size: row.wave_size,
    pause_s: row.pause_s,
    max_failures: row.max_failures,
    respect_maintenance: row.respect_maintenance === 1,
    window_wait_h: row.window_wait_h,
    current_wave: row.current_wave,
    waves: row.waves,
    next_wave_at: iso(row.next_wave_at),
    counts,
    failures: row.failures,
    created_by: row.created_by,
    created_at: isoMillis(row.created_at),
    finished_at: iso(row.finished_at),
    duration_s: row.finished_at === null ? null : Math.round((row.finished_at - row.created_at) / 100) / 10,
  };
}

export function presentTarget(t: TargetRow): CampaignTarget {
  return {
    wave: t.wave,
    host_id: t.host_id,
    vmid: t.vmid,
    name: t.name,
    status: t.status,
    reason: t.reason,
    operation_id: t.operation_id,
    started_at: iso(t.started_at),
    finished_at: iso(t.finished_at),
  };
}

export function presentCampaign(row: CampaignRow, counts: CampaignCounts, targets: TargetRow[]): Campaign {
  return { ...presentSummary(row, counts), targets: targets.map(presentTarget) };
}
