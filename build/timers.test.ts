import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');

/**
 * Where server/ may hold a timer of its own. Background work goes through the task runner
 * (server/tasks.ts, `ctx.tasks.every` / `ctx.tasks.at`), so that it never overlaps itself, logs its
 * failures under its name and ends in the one shutdown; what is left here is the runner itself and
 * timers scoped to one request or one write. Each entry: how many uses, and why.
 */
const ALLOWED: Record<string, { count: number; reason: string }> = {
  'server/tasks.ts': { count: 2, reason: 'the task runner itself: its tasks\' timer, and within(), the bound of a wait at shutdown' },
  'server/logger.ts': { count: 1, reason: 'the 100 ms flush of batched request lines, in the logger the task runner itself logs through' },
  'server/fatal.ts': { count: 2, reason: 'the process is dying: the last-resort kill and the retry of a stderr write, which must not rely on anything the app built' },
  'server/notifications/channels/email.ts': { count: 1, reason: 'one SMTP attempt\'s time limit: scoped to that attempt, cleared when it ends' },
  'server/main.ts': { count: 1, reason: 'the stopped process\'s exit, 2 s at most after its last log line, should anything still hold the event loop (unref\'d)' },
  'server/http/server.ts': { count: 1, reason: 'while the HTTP server stops, the sweep that closes each connection as it falls idle: scoped to that stop, cleared when it ends' },
  'server/files/routes.ts': { count: 1, reason: 'a refused upload\'s connection lingers at most 2 s so its client reads the answer: scoped to that request\'s socket, cleared when it closes' },
};

const TIMER = /\bset(?:Interval|Timeout)\b/g;

/** Uses of setInterval/setTimeout in code (comments left out: a comment naming one is no timer). */
export function timerUses(source: string): number {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return code.match(TIMER)?.length ?? 0;
}

function serverSources(dir = path.join(root, 'server')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : serverSources(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path.relative(root, full).split(path.sep).join('/')] : [];
  });
}

describe('timers in server/ (background work goes through server/tasks.ts)', () => {
  it('appear only in the runner and the request-scoped uses allowed by name, each with its reason', () => {
    const found: Record<string, number> = {};
    for (const file of serverSources()) {
      const uses = timerUses(fs.readFileSync(path.join(root, file), 'utf8'));
      if (uses) found[file] = uses;
    }
    const allowed = Object.fromEntries(Object.entries(ALLOWED).map(([file, { count }]) => [file, count]));
    // A new file here: move its loop onto ctx.tasks, or add it above with the reason it is scoped to one request.
    expect(found).toEqual(allowed);
  });

  it('are found in code, whichever way they are written, and not in comments', () => {
    expect(timerUses('const t = setInterval(tick, 1_000);')).toBe(1);
    expect(timerUses('globalThis.setTimeout(run, 5); import { setTimeout as sleep } from "node:timers/promises";')).toBe(2);
    expect(timerUses('// setTimeout holds at most ~24.8 days\n/* setInterval */ const url = "http://x"; setTimeout(f)')).toBe(1);
  });
});
