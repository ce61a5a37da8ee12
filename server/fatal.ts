import fs from 'node:fs';

export type FatalOrigin = 'uncaughtException' | 'unhandledRejection';

/** Below PIPE_BUF (4 KiB), so the line reaches a pipe in one piece even while the logger writes too. */
const MAX_LINE = 4000;

/**
 * The last log line (pino's shape, level 60 "fatal"): why the process stops, with the error's type,
 * message and stack only. Nothing else the error carries is written: body-parser's errors hold the
 * request body, which may hold a password.
 */
export function fatalLine(origin: FatalOrigin, reason: unknown, now: number): string {
  let type: string;
  let message: string;
  let stack: string | undefined;
  const text = (read: () => unknown) => {
    try {
      return String(read());
    } catch {
      return '(cannot be shown)';
    }
  };
  if (reason instanceof Error) {
    type = text(() => reason.name);
    message = text(() => reason.message);
    stack = typeof reason.stack === 'string' ? reason.stack : undefined;
  } else {
    type = reason === null ? 'null' : typeof reason;
    message = text(() => reason);
  }
  message = message.slice(0, 200);
  const why = origin === 'uncaughtException' ? 'an uncaught exception' : 'an unhandled promise rejection';
  const render = (stackRoom: number) =>
    JSON.stringify({ level: 60, time: now, msg: `homefleet stopped by ${why}: ${message}`, err: { type, message, ...(stack ? { stack: stack.slice(0, stackRoom) } : {}) } }) + '\n';
  let room = 3000;
  let line = render(room);
  while (Buffer.byteLength(line) > MAX_LINE && room > 0) line = render((room = Math.floor(room / 2)));
  return line;
}

export interface FatalDeps {
  now(): number;
  /** Writes the line; calls `done` once it is written or cannot be. */
  write(line: string, done: () => void): void;
  exit(code: number): void;
  /** The last resort when the write never ends (a full pipe nobody reads): the process is killed, which a supervisor restarts as well. */
  kill(): void;
  giveUpMs: number;
}

/**
 * What the process does on an uncaught exception or unhandled rejection: its state is unknown, so it
 * stops, with one line saying why, and a non-zero status for systemd (Restart=on-failure) or the
 * container runtime (--restart unless-stopped) to start it again. The first error wins; later ones
 * while stopping are not written.
 */
export function createFatalHandler(deps: FatalDeps): (origin: FatalOrigin, reason: unknown) => void {
  let stopping = false;
  return (origin, reason) => {
    if (stopping) return;
    stopping = true;
    const lastResort = setTimeout(deps.kill, deps.giveUpMs);
    deps.write(fatalLine(origin, reason, deps.now()), () => {
      clearTimeout(lastResort);
      deps.exit(1);
    });
  };
}

/** Writes to stdout without blocking the event loop (so the last-resort timer can fire), waiting out EAGAIN. */
function writeStdout(line: string, done: () => void): void {
  const data = Buffer.from(line);
  let offset = 0;
  const attempt = () =>
    fs.write(1, data, offset, data.length - offset, null, (err, written) => {
      if (err && (err.code === 'EAGAIN' || err.code === 'EINTR')) return void setTimeout(attempt, 20);
      if (err) return done();
      offset += written;
      if (offset < data.length) attempt();
      else done();
    });
  attempt();
}

/** Installs the handler on this process (server/main.ts, first thing). */
export function stopOnFatalErrors(): void {
  const handle = createFatalHandler({
    now: Date.now,
    write: writeStdout,
    exit: (code) => {
      // pino writes what it still holds on 'exit', synchronously, and waits out a full pipe for as long
      // as that takes: with a stdout nobody reads, the process would never end and never be restarted.
      process.removeAllListeners('exit');
      process.exit(code);
    },
    kill: () => process.kill(process.pid, 'SIGKILL'),
    giveUpMs: 3000,
  });
  process.on('uncaughtException', (err) => handle('uncaughtException', err));
  process.on('unhandledRejection', (reason) => handle('unhandledRejection', reason));
}
