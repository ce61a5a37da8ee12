import { spawn, type ChildProcess } from 'node:child_process';
import { builtHelper } from '../builtin.js';
import { HttpError } from '../errors.js';
import type { ChangeContext } from '../http/request-context.js';
import { bodyError } from '../http/json-text.js';

/** Where imports are parsed, checked and written (server/import-helper.ts). */
export interface ImportOptions {
  /** The helper program (default: the one the build ships); false: the server does it all itself. */
  helperFile?: string | false;
  /** What runs it (default: this process's executable, plain Node even in the desktop app). */
  helperCommand?: string;
}

/** The change context as it crosses to the helper: the request's status as it is when the server sends it. */
export type SentContext = Omit<ChangeContext, 'request'> & { request?: { id: string; method: string; path: string; status: number } | undefined };

/** What the server tells the helper: write, now, as this person through this request. */
export interface ServerMessage {
  now: number;
  context: SentContext;
}

/** What the helper tells the server. */
export type HelperMessage =
  | { stage: 'checked' }
  | { stage: 'refused'; status: number; body: Record<string, unknown>; headers?: Record<string, string> }
  | { stage: 'refused'; status: number; type: string; message: string }
  | { stage: 'written'; imported: number; announced: [string, unknown][] }
  | { stage: 'failed'; detail: string };

/** An import in its helper: `checked` once the body passed (or the 400 naming what did not); `write` once told to. */
export interface ImportInHelper {
  checked: Promise<void>;
  write(message: ServerMessage): Promise<{ imported: number; announced: [string, unknown][] }>;
  /** Ends the helper (a refused body, a failed snapshot, a closed connection): nothing is written. */
  cancel(): void;
}

/** The built helper program, or undefined where there is none (the server run from its sources). */
export const importHelperFile = (): string | undefined => builtHelper('import-helper');

/**
 * Starts the helper on `dbPath` and sends it `body` on its stdin. The helper is a short-lived process
 * of its own, as the snapshot helper is (snapshot-copier.ts): the server's memory does not carry the
 * import's 200,000 parsed rows, and its event loop none of the parsing, checking and writing.
 */
export function startImportHelper(dbPath: string, body: Buffer, file: string, command = process.execPath): ImportInHelper {
  const child: ChildProcess = spawn(command, [file, dbPath], {
    // ELECTRON_RUN_AS_NODE: in the desktop app, execPath is Electron; this makes it plain Node.
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    stdio: ['pipe', 'ignore', 'pipe', 'ipc'],
    windowsHide: true,
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    if (stderr.length < 2000) stderr += chunk.toString();
  });
  // A helper that ended early closes its stdin: that is told by its exit, not by an EPIPE here.
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(body);

  let checked!: () => void;
  let refuse!: (err: Error) => void;
  const checkedP = new Promise<void>((resolve, reject) => {
    checked = resolve;
    refuse = reject;
  });
  // Nobody waits for the check of an import whose request went away.
  checkedP.catch(() => undefined);
  let written: ((result: { imported: number; announced: [string, unknown][] }) => void) | undefined;
  let failWrite: ((err: Error) => void) | undefined;
  let ended: Error | undefined;
  const fail = (err: Error) => {
    ended ??= err;
    refuse(err);
    failWrite?.(err);
  };
  child.on('message', (m: HelperMessage) => {
    if (m.stage === 'checked') checked();
    else if (m.stage === 'refused') refuse('type' in m ? bodyError(m.status, m.type, m.message) : new HttpError(m.status, m.body, m.headers));
    else if (m.stage === 'written') written?.({ imported: m.imported, announced: m.announced });
    else fail(new Error(`the import failed: ${m.detail}`));
  });
  child.on('error', (err) => fail(err));
  child.on('exit', (code, signal) => fail(new Error(`the import helper stopped (${signal ?? code}) ${stderr.trim().split('\n').at(-1) ?? ''}`.trim())));

  return {
    checked: checkedP,
    write(message) {
      if (ended) return Promise.reject(ended);
      const result = new Promise<{ imported: number; announced: [string, unknown][] }>((resolve, reject) => {
        written = resolve;
        failWrite = reject;
      });
      child.send(message, (err) => err && fail(err));
      return result;
    },
    cancel() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** The helper program to use, or undefined to do the work in the server. */
export function helperOf(options: ImportOptions = {}): { file: string; command: string } | undefined {
  if (options.helperFile === false) return undefined;
  const file = options.helperFile ?? importHelperFile();
  return file ? { file, command: options.helperCommand ?? process.execPath } : undefined;
}
