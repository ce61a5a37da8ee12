import type { Operation } from '../contract/operations.js';
import { isoMillis } from '../time.js';
import type { OperationRow } from './repo.js';

const iso = (ms: number | null) => (ms === null ? null : isoMillis(ms));

/** Params kept for the server's own use, not shown. */
const INTERNAL_PARAMS = new Set(['auto']);

/**
 * An operation as the API shows it. `withOutput`: the reader has `diagnostics.read` ("`output` only
 * for diagnostics.read, otherwise absent"); the live event never carries it.
 */
export function presentOperation(row: OperationRow, withOutput: boolean): Operation {
  const params = Object.fromEntries(Object.entries(JSON.parse(row.params) as Operation['params']).filter(([key]) => !INTERNAL_PARAMS.has(key)));
  return {
    id: row.id,
    host_id: row.host_id,
    vmid: row.vmid,
    type: row.type,
    action: row.action,
    status: row.status,
    params,
    reason: row.reason,
    requested_by: row.requested_by,
    requested_at: isoMillis(row.requested_at),
    sent_at: iso(row.sent_at),
    finished_at: iso(row.finished_at),
    exit_code: row.exit_code,
    ...(withOutput ? { output: row.output } : {}),
  };
}
