import { EventEmitter } from 'node:events';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import type { HostEvent } from './hosts/service.js';
import type { Logger } from './logger.js';
import type { AuditEntry } from './access/audit.js';
import type { Instance } from './registry/schema.js';
import type { UsageReport } from './usage/schema.js';
import type { Clock } from './time.js';
import type { TlsInfo } from './tls/setup.js';

/** What happened inside the app that another feature may act on (jobs run on create, say). */
export interface AppEventMap {
  'instance.created': [instance: Instance];
  'backup.imported': [];
  // Live events (server/events): each feature reports what changed; the stream hub forwards it.
  'instance.updated': [instance: Instance, changed: string[], previousVmid: number];
  'instance.deleted': [vmid: number];
  'job.run.started': [run: JobRunEvent];
  'job.run.finished': [run: JobRunEvent];
  'usage.report': [report: UsageReport];
  'audit.entry': [entry: AuditEntry];
  /** Emitted by the hosts feature: a host's status changed, or it sent a heartbeat. */
  'host.status': [host: HostEvent];
  'host.heartbeat': [host: HostEvent];
  /** Sessions ended (logout, revoke, disable, role change, password reset, a new login); streams re-check at once. */
  'session.revoked': [change: SessionRevoked];
  /** A personal API token was revoked (server/tokens); its event streams end at once. */
  'token.revoked': [change: TokenRevoked];
}

export interface JobRunEvent {
  job_id: number;
  job_key: string;
  run_id: number;
  status: 'running' | 'success' | 'error';
  started_at: string;
  ended_at: string | null;
  result: string;
}

export interface SessionRevoked {
  accountId?: number;
  sessionId?: number;
  /** Shown to the person when their session is gone: "signed out", say. */
  reason: string;
}

export interface TokenRevoked {
  tokenId: number;
  reason: string;
}

export type AppEvents = EventEmitter<AppEventMap>;

/** Shared by every feature: handed to each feature's `register` function by createApp. */
export interface AppContext {
  db: Db;
  config: Config;
  clock: Clock;
  logger: Logger;
  events: AppEvents;
  /** Set when the server speaks HTTPS itself (server/tls): `fingerprint`, `spkiPin` for install commands. */
  tls?: TlsInfo;
}

export function createEvents(): AppEvents {
  return new EventEmitter<AppEventMap>();
}
