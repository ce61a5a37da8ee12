import type { ChildProcess } from 'node:child_process';

/**
 * The URL a spawned built server (dist/server/main.js, LOG_LEVEL=info) says it listens on, from its
 * first log lines; rejects with what it printed when it exits first. Only the start of the output is
 * kept: the listening line is all that is needed.
 */
export function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    const read = (chunk: Buffer) => {
      if (out.length < 10_000) out += chunk;
      const match = /listening on (https?:\/\/[^"\s]+)/.exec(out);
      if (match) resolve(match[1]!);
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', () => reject(new Error(`server exited: ${out}`)));
  });
}
