import * as z from 'zod';
import { shared } from './parts.js';
import { InstanceInput } from './registry.js';

/** The times a backup's rows carry: ISO 8601 UTC, as the export writes them. */
export const isoTimestamp = shared(() =>
  z
    .string({ error: 'must be an ISO 8601 UTC timestamp' })
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/, { error: 'must be an ISO 8601 UTC timestamp' }),
);

/**
 * An instance row of a backup (POST /api/import): the instance as written by a client (missing flags 0,
 * missing tailscale_ip ""), with its timestamps when the backup has them (older backups lack them).
 */
export const BackupInstance = z.lazy(() =>
  InstanceInput.unwrap().extend({
    created_at: isoTimestamp().optional(),
    updated_at: isoTimestamp().optional(),
  }),
);
export type BackupInstance = z.output<typeof BackupInstance>;
