import { createBus, type Bus } from './bus.js';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import { createTransactions, type Transactions } from './db/tx.js';
import type { Logger } from './logger.js';
import { createTasks, type Tasks } from './tasks.js';
import type { Clock } from './time.js';

/** What the server speaks HTTPS with, for the features that name it (install commands, the start-up log). */
export interface TlsInfo {
  /** true for the certificate homefleet made itself; browsers will ask the person to accept it. */
  selfSigned: boolean;
  /** SHA-256 of the certificate, `AB:CD:…` as browsers show it. */
  fingerprint: string;
  /** `sha256//<base64>` of its public key, as `curl --pinnedpubkey` takes it. */
  spkiPin: string;
  /** The DNS names and addresses it covers: the allowed Origins are `https://<name>:<port>` of these. */
  names: string[];
  /** When it expires (ms): the tls.expiry alert watches it. */
  notAfter?: number;
}

/**
 * Shared by every feature, built once by createApp. `transaction` is the one way to open a
 * transaction; `bus.publish` inside one is heard only once it commits.
 */
export interface AppContext {
  db: Db;
  config: Config;
  clock: Clock;
  logger: Logger;
  bus: Bus;
  /** The background work (server/tasks.ts): every loop registers here and owns no timer of its own. */
  tasks: Tasks;
  transaction: Transactions['transaction'];
  afterCommit: Transactions['afterCommit'];
  /**
   * Group commit (server/db/tx.ts): the HTTP layer answers once the turn's changes have committed.
   * `exclusive` work writes through another connection (the import helper's) while this one is `paused`.
   */
  commits: Pick<Transactions, 'whenCommitted' | 'flush' | 'alone' | 'exclusive' | 'paused'>;
  /** Set when the server speaks HTTPS itself (server/tls): `fingerprint`, `spkiPin` for install commands. */
  tls?: TlsInfo;
}

export type DataContext = Pick<AppContext, 'db' | 'bus' | 'transaction' | 'afterCommit' | 'commits'>;

/**
 * A database with its transactions and the bus that announces what they commit. Command-line tools
 * take the default, each transaction committed as it returns; the server groups them (`group`).
 */
export function createDataContext(db: Db, report: (err: unknown, what: string) => void = () => {}, options: { group?: boolean } = {}): DataContext {
  const transactions = createTransactions(db, (err) => report(err, 'after-commit work failed'), options);
  const bus = createBus(transactions, (err, type) => report(err, `listener of ${type} failed`));
  const { whenCommitted, flush, alone, exclusive, paused } = transactions;
  return { db, bus, transaction: transactions.transaction, afterCommit: transactions.afterCommit, commits: { whenCommitted, flush, alone, exclusive, paused } };
}

/** The app's context: one per database, built by createApp, with group commit. */
export function createContext(parts: Pick<AppContext, 'db' | 'config' | 'clock' | 'logger' | 'tls'>): AppContext {
  const { logger } = parts;
  const report = (err: unknown, what: string) => logger.error({ err: { message: (err as Error).message } }, what);
  const data = createDataContext(parts.db, report, { group: true });
  // A task's run waits out a write through another connection (server/db/tx.ts `exclusive`).
  return { ...parts, tasks: createTasks(logger, { before: data.commits.paused }), ...data };
}
