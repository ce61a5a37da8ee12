import * as z from 'zod';
import { STACKS } from '../instance-fields.js';
import { idQuery } from './page.js';
import { oneOf, shared } from './parts.js';
import { STORAGE_NAME } from './storage.js';

/** The newest backups an agent keeps per guest, and the most jobs and backups one report carries. */
export const BACKUPS_PER_GUEST = 10;
export const MAX_BACKUP_JOBS = 1000;
export const MAX_BACKUPS = 25_000;
const MAX_VMID = 999_999_999;
/** A backup's volume id: `<storage>:backup/<file>`, or on Proxmox Backup Server `<storage>:backup/vm/100/2026-11-22T02:00:00Z` (colons in the time). */
export const BACKUP_VOLID = /^[A-Za-z][A-Za-z0-9_.-]{0,63}:[A-Za-z0-9][A-Za-z0-9._+/:-]{0,300}$/;

export const VERIFICATIONS = ['ok', 'failed'] as const;
export type BackupVerification = (typeof VERIFICATIONS)[number] | null;

const vmid = shared(() => z.int({ error: 'must be a vmid' }).min(1, { error: 'must be a vmid' }).max(MAX_VMID, { error: 'must be a vmid' }));
const vmids = shared(() => z.array(vmid(), { error: 'must be a list of vmids' }).max(10_000, { error: 'must hold at most 10000 vmids' }));
const storage = shared(() => z.string({ error: 'must be a storage id' }).regex(STORAGE_NAME, { error: 'must be a storage id: a letter, then letters, digits, _ . - (at most 64)' }));

/**
 * POST /api/agent/backups (host token): the cluster's backup jobs (`pvesh get /cluster/backup`) and
 * the newest backups of each guest on the node's storages that hold backups.
 */
export const BackupReportBody = z.lazy(() =>
  z.object(
    {
      jobs: z
        .array(
          z.object(
            {
              id: z.string({ error: 'must be a job id' }).regex(/^[A-Za-z0-9][A-Za-z0-9:._-]{0,127}$/, { error: 'must be a job id such as backup-1a2b3c4d-5e6f' }),
              enabled: z.boolean({ error: 'must be true or false' }),
              schedule: z.string({ error: 'must be a schedule' }).max(256, { error: 'must be at most 256 characters' }),
              vmids: z.union([z.literal('all'), vmids()], { error: 'must be "all" or a list of vmids' }),
              exclude: vmids().default([]),
              storage: storage().nullable().default(null),
            },
            { error: 'must be an object {id, enabled, schedule, vmids, exclude, storage}' },
          ),
          { error: 'must be a list of jobs' },
        )
        .max(MAX_BACKUP_JOBS, { error: `must hold at most ${MAX_BACKUP_JOBS} jobs` }),
      backups: z
        .array(
          z.object(
            {
              vmid: vmid(),
              volid: z.string({ error: 'must be a volume id' }).regex(BACKUP_VOLID, { error: 'must be a volume id such as pbs:backup/vm/100/2026-01-01T02:00:00Z' }),
              ctime: z.int({ error: 'must be a Unix time' }).min(0, { error: 'must be a Unix time' }).max(2 ** 40, { error: 'must be a Unix time' }),
              size: z.int({ error: 'must be a whole number of bytes' }).min(0, { error: 'must be a whole number of bytes' }).max(Number.MAX_SAFE_INTEGER),
              storage: storage(),
              protected: z.boolean({ error: 'must be true or false' }).default(false),
              verified: z.enum(VERIFICATIONS, { error: 'must be "ok", "failed" or null' }).nullable().default(null),
            },
            { error: 'must be an object {vmid, volid, ctime, size, storage, protected, verified}' },
          ),
          { error: 'must be a list of backups' },
        )
        .max(MAX_BACKUPS, { error: `must hold at most ${MAX_BACKUPS} backups` }),
    },
    { error: 'must be a JSON object {jobs, backups}' },
  ),
);
export type BackupReportRequest = z.input<typeof BackupReportBody>;
export type BackupReport = z.output<typeof BackupReportBody>;

const on = shared(() => z.literal(true, { error: 'must be true (leave the check out to not ask for it)' }).optional());

/** One policy: a scope (a stack or a collection) and the checks its instances must pass. */
export const PolicyBody = z.lazy(() =>
  z.object(
    {
      scope: z.union(
        [
          z.strictObject({ stack: oneOf(STACKS) }, { error: 'must be {stack} or {collection_id}' }),
          z.strictObject({ collection_id: z.int({ error: 'must be a collection id' }).positive({ error: 'must be a collection id' }) }, { error: 'must be {stack} or {collection_id}' }),
        ],
        { error: 'must be {stack} or {collection_id}' },
      ),
      checks: z
        .strictObject(
          {
            running: on(),
            on_tailnet: on(),
            patched: on(),
            in_automation: on(),
            in_backup_job: on(),
            backed_up_within_h: z.int({ error: 'must be a whole number of hours' }).min(1, { error: 'must be from 1 to 8760 hours' }).max(8760, { error: 'must be from 1 to 8760 hours' }).optional(),
            agent_current: on(),
          },
          { error: 'must be an object of checks: running, on_tailnet, patched, in_automation, in_backup_job, backed_up_within_h, agent_current' },
        )
        .refine((c) => Object.values(c).some((v) => v !== undefined), { error: 'must ask for at least one check' }),
    },
    { error: 'must be an object {scope, checks}' },
  ),
);
export type PolicyInput = z.output<typeof PolicyBody>;

/** PUT /api/policies: the whole list, replacing what was there. */
export const PoliciesBody = z.lazy(() => z.array(PolicyBody, { error: 'must be a list of policies' }).max(100, { error: 'must hold at most 100 policies' }));
export type PoliciesInput = z.output<typeof PoliciesBody>;

/** GET /api/fleet-health?failing=true&collection_id= */
export const FleetHealthQuery = z.lazy(() =>
  z.object({
    failing: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().transform((v) => v === 'true').describe('`true`: only instances with a failing check'),
    collection_id: idQuery().optional().describe('only the instances of this collection'),
  }),
);
export type FleetHealthParams = z.input<typeof FleetHealthQuery>;
export type FleetHealthQuery = z.output<typeof FleetHealthQuery>;
