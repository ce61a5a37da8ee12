import { liveEvent } from './events.js';
import type { UsageStart } from './inputs/usage.js';

/** What the two ingestion routes answer. */
export interface UsageRecorded {
  status: 'recorded' | 'updated';
}

/** A stored provisioning report as operators see it. */
export interface UsageReport extends Omit<UsageStart, 'status'> {
  id: number;
  status: string;
  error: string | null;
  created_at: string;
  updated_at: string;
}

/** What viewers (usage summaries only: content.read) get of a report: what the charts count. */
export type UsageReportSummary = Pick<UsageReport, 'id' | 'nsapp' | 'status' | 'type' | 'created_at' | 'updated_at'>;

export interface UsageCount {
  key: string;
  count: number;
}

export interface UsageCounts {
  total: number;
  by_nsapp: UsageCount[];
  by_status: UsageCount[];
}

/** What is kept of usage reports: "the summary says what is kept". */
export interface RetentionPolicy {
  max_age_days: number;
  max_reports: number;
}

/** GET /api/usage?limit=&before=: newest first; `next_before` is the id the next page starts before. */
export interface UsageList {
  reports: UsageReport[];
  next_before: number | null;
  counts: UsageCounts;
}

/** GET /api/usage/summary */
export interface UsageSummary extends UsageCounts {
  retention?: RetentionPolicy;
}

export interface UsageDay {
  day: string;
  done: number;
  failed: number;
  /** Still installing an hour after the start report. */
  stuck: number;
  /** Started less than an hour ago, not finished yet. */
  installing: number;
}

export interface UsageAppStats {
  nsapp: string;
  total: number;
  done: number;
  failed: number;
  /** failed / (done + failed), or null before any install finished. */
  failure_rate: number | null;
}

/** GET /api/usage/stats?days=: the usage page's aggregates (no report's fields, so content.read). */
export interface UsageStats {
  since: string;
  /** Only the days that had reports, oldest first. */
  days: UsageDay[];
  apps: UsageAppStats[];
  errors: { error: string; count: number }[];
  retention?: RetentionPolicy;
}

export const usageEvents = {
  'usage.report': liveEvent<UsageReport, UsageReportSummary>('content.read', {
    capability: 'content.manage',
    summarize: ({ id, nsapp, status, type, created_at, updated_at }) => ({ id, nsapp, status, type, created_at, updated_at }),
  }),
};
