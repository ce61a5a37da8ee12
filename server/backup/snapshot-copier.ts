import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { builtHelper } from '../builtin.js';
import type { AppContext } from '../context.js';
import { removeDatabaseFiles } from '../db/database.js';
import { checkCopy } from './snapshot-check.js';
import { CHECK_AT_LOW_PRIORITY } from './snapshot-helper-args.js';
import type { WorkerMessage } from './snapshot-worker.js';

/** What someone waits for while a snapshot is taken (snapshot-copier's `copy`). */
export type Waiting = 'check' | 'copy' | 'nothing';

/**
 * Pages copied per event-loop turn when the server's own connection copies (before an import, or
 * without a helper): 2,048 pages of 4 KiB, a few milliseconds each.
 */
const PAGES_PER_STEP = 2048;

/** The snapshot helper program as the build ships it (builtHelper). */
export const snapshotWorkerFile = (): string | undefined => builtHelper('snapshot-worker');

export interface Copying {
  /** The copy is complete: it holds the database as it was when it started. */
  copied: Promise<void>;
  /** The copy passed integrity_check and is on disk; rejects with the reason otherwise. */
  checked: Promise<void>;
}

/** The helper could not run at all (no message from it): the server does the work instead. */
class HelperUnavailable extends Error {}

/**
 * Copying and checking run in a short-lived helper process (snapshot-worker.ts, run by this same
 * Node, or Electron as Node) at the lowest CPU priority: the server's event loop never waits for
 * either, and the server's memory does not carry it. (A worker thread per snapshot left memory
 * behind each time: peak RSS over back-to-back imports 244, 258, 277 MB; one kept worker still cost
 * ~30 MB: 220, 255, 255 MB.) When no helper can run, the server's own connection copies, a step at a time.
 */
export function createCopier({ db, logger, commits }: Pick<AppContext, 'db' | 'logger'> & Partial<Pick<AppContext, 'commits'>>, helperCommand: string, workerFile = snapshotWorkerFile()) {
  let unavailable = false;
  const running = new Set<ChildProcess>();

  function giveUpHelper(reason: string): void {
    if (unavailable) return;
    unavailable = true;
    logger.warn({ reason }, 'the snapshot helper cannot run: snapshots are copied by the server itself');
  }

  function send(source: string, dest: string, waits: Waiting): Copying | undefined {
    if (unavailable) return undefined;
    if (!workerFile) {
      giveUpHelper('snapshot-worker.js is missing: build the server (node build/build.mjs)');
      return undefined;
    }
    let child: ChildProcess;
    try {
      child = spawn(helperCommand, [workerFile, source, dest, ...(waits === 'copy' ? [CHECK_AT_LOW_PRIORITY] : [])], {
        // ELECTRON_RUN_AS_NODE: in the desktop app, execPath is Electron; this makes it plain Node.
        env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        windowsHide: true,
      });
    } catch (err) {
      giveUpHelper((err as Error).message);
      return undefined;
    }
    running.add(child);
    try {
      if (child.pid && waits === 'nothing') os.setPriority(child.pid, 19);
    } catch {
      // Not allowed here: it runs at normal priority.
    }
    let copied!: () => void;
    let checked!: () => void;
    let failCopy!: (err: Error) => void;
    let failCheck!: (err: Error) => void;
    const copiedP = new Promise<void>((resolve, reject) => {
      copied = resolve;
      failCopy = reject;
    });
    const checkedP = new Promise<void>((resolve, reject) => {
      checked = resolve;
      failCheck = reject;
    });
    copiedP.catch(() => undefined);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString();
    });
    const fail = (err: Error) => {
      failCopy(err);
      failCheck(err);
    };
    const lastLine = () => stderr.trim().split('\n').at(-1) ?? '';
    let heard = false;
    child.on('message', (m: WorkerMessage) => {
      heard = true;
      if (m.stage === 'copied') copied();
      else if (m.stage === 'checked') checked();
      else fail(new Error(m.detail));
    });
    child.on('error', (err) => {
      running.delete(child);
      fail(heard ? err : new HelperUnavailable(err.message));
    });
    child.on('exit', (code, signal) => {
      running.delete(child);
      if (!heard) return fail(new HelperUnavailable(`the snapshot helper could not run (${signal ?? code}) ${lastLine()}`));
      fail(new Error(`the snapshot helper stopped (${signal ?? code}) ${lastLine()}`.trim()));
    });
    return { copied: copiedP, checked: checkedP };
  }

  /**
   * Copied on the server's connection, PAGES_PER_STEP pages per turn of the event loop. A step finds
   * the connection busy while a group of transactions is open, so no group opens until the copy is done.
   */
  function here(dest: string): Copying {
    const backup = () => db.backup(dest, { progress: () => PAGES_PER_STEP });
    const copied = (commits ? commits.alone(backup) : backup()).then(() => undefined);
    return { copied, checked: copied.then(() => checkCopy(dest)) };
  }

  return {
    /**
     * `waits`: what someone waits for, which runs at normal priority; the rest at the lowest. A
     * person's "take one now" waits for the checked snapshot, an import only for the copy, a
     * scheduled snapshot for nothing.
     */
    copy(source: string, dest: string, waits: Waiting): Copying {
      const helper = send(source, dest, waits);
      if (!helper) return here(dest);
      // A helper that cannot run (an unusual runtime) is not tried again; this snapshot is taken here.
      let fallback: Copying | undefined;
      const instead = (err: unknown): Copying => {
        if (!(err instanceof HelperUnavailable)) throw err;
        if (!fallback) {
          giveUpHelper(err.message);
          removeDatabaseFiles(dest);
          fallback = here(dest);
        }
        return fallback;
      };
      return {
        copied: helper.copied.catch((err) => instead(err).copied),
        checked: helper.checked.catch((err) => instead(err).checked),
      };
    },

    async close() {
      await Promise.all(
        [...running].map((child) => {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill();
          return exited;
        }),
      );
    },
  };
}
