import { EventEmitter } from 'node:events';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import type { HostEvent } from './hosts/service.js';
import type { Logger } from './logger.js';
import type { Instance } from './registry/schema.js';
import type { Clock } from './time.js';

/** What happened inside the app that another feature may act on (jobs run on create, say). */
export interface AppEventMap {
  'instance.created': [instance: Instance];
  'backup.imported': [];
  /** Every accepted agent heartbeat, and each change of a host's status (enrolled, back online, deleting, deleted). */
  'host.heartbeat': [host: HostEvent];
  'host.status': [host: HostEvent];
}

export type AppEvents = EventEmitter<AppEventMap>;

/** Shared by every feature: handed to each feature's `register` function by createApp. */
export interface AppContext {
  db: Db;
  config: Config;
  clock: Clock;
  logger: Logger;
  events: AppEvents;
}

export function createEvents(): AppEvents {
  return new EventEmitter<AppEventMap>();
}
