import { liveEvent } from './events.js';

/** A stored provisioning report as operators see it. */
export interface UsageReport {
  id: number;
  ct_type: number | null;
  type: 'lxc' | 'vm';
  disk_size: number | null;
  core_count: number | null;
  ram_size: number | null;
  os_type: string;
  os_version: string;
  disableip6: string;
  nsapp: string;
  method: string;
  pve_version: string;
  random_id: string;
  status: string;
  error: string | null;
  created_at: string;
  updated_at: string;
}

/** What viewers (usage summaries only: content.read) get of a report: what the charts count. */
export type UsageReportSummary = Pick<UsageReport, 'id' | 'nsapp' | 'status' | 'type' | 'created_at' | 'updated_at'>;

export const usageEvents = {
  'usage.report': liveEvent<UsageReport, UsageReportSummary>('content.read', {
    capability: 'content.manage',
    summarize: ({ id, nsapp, status, type, created_at, updated_at }) => ({ id, nsapp, status, type, created_at, updated_at }),
  }),
};
