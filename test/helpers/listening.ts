import type { ChildProcess } from 'node:child_process';
import { onTestFinished } from 'vitest';

/**
 * The URL a spawned built server (dist/server/main.js, LOG_LEVEL=info) says it listens on, from its
 * first log lines; rejects with what it printed when it exits first. Only the start of the output is
 * kept: the listening line is all that is needed. One that has not said it within 10 s is killed, and
 * so is one still running when the test ends (a failed assertion skips the test's own stop).
 */
export function listeningUrl(child: ChildProcess): Promise<string> {
  killWhenTestEnds(child);
  return waitForListening(child);
}

/** listeningUrl without the kill at the end of the test, for a server a file starts in beforeAll and stops in afterAll. */
export function waitForListening(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`no listening line within 10 s: ${out}`))), 10_000);
    const read = (chunk: Buffer) => {
      if (out.length < 10_000) out += chunk;
      const match = /listening on (https?:\/\/[^"\s]+)/.exec(out);
      if (match) (clearTimeout(timer), resolve(match[1]!));
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', () => (clearTimeout(timer), reject(new Error(`server exited: ${out}`))));
  });
}

/** Kills `child` when the current test ends, if it is still running then. */
export function killWhenTestEnds(child: ChildProcess): void {
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
}
