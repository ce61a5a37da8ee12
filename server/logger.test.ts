import path from 'node:path';
import * as esbuild from 'esbuild';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
let logger: string;

beforeAll(async () => {
  const built = await esbuild.build({ entryPoints: [path.join(root, 'server/logger.ts')], bundle: true, platform: 'node', format: 'esm', packages: 'external', write: false, logLevel: 'silent' });
  logger = built.outputFiles[0]!.text;
});

/**
 * Runs `script` in a Node process of its own, after the logger module and a count of the writes
 * stdout gets (pino's writer calls fs.write); returns what it printed, line by line.
 */
async function run(script: string): Promise<{ lines: string[]; exitCode: number | undefined }> {
  const counting = "import fs from 'node:fs'; let writes = 0; const fsWrite = fs.write; fs.write = (...args) => (writes++, fsWrite(...args));";
  const result = await execa(process.execPath, ['--input-type=module', '-e', `${logger}\n${counting}\n${script}`], { cwd: root, reject: false });
  expect(result.stderr).toBe('');
  return { lines: result.stdout.split('\n').filter(Boolean), exitCode: result.exitCode };
}

const messages = (lines: string[]) => lines.map((line) => (line.startsWith('{') ? (JSON.parse(line) as { msg: string }).msg : line));

describe('logger', () => {
  it('writes request lines in batches: 20 lines 5 ms apart take a few writes, not twenty', async () => {
    const { lines } = await run(`
      const requests = requestLogger(createLogger('info'));
      for (let i = 0; i < 20; i++) {
        requests.info({ method: 'GET', path: '/api/instances', status: 200, ms: 1.5 }, 'request');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      fs.writeSync(1, 'writes ' + writes + '\\n');
    `);
    expect(messages(lines).filter((m) => m === 'request')).toHaveLength(20);
    const writes = Number(lines.at(-1)!.split(' ')[1]);
    expect(writes).toBeGreaterThanOrEqual(1);
    expect(writes).toBeLessThanOrEqual(5);
  });

  it('shows a request line on a quiet server within a blink, with no other line to push it out', async () => {
    const { lines } = await run(`
      requestLogger(createLogger('info')).info({ method: 'GET', path: '/api/health', status: 200, ms: 0.4 }, 'request');
      await new Promise((resolve) => setTimeout(resolve, 400));
      fs.writeSync(1, 'after 400 ms\\n');
    `);
    expect(messages(lines)).toEqual(['request', 'after 400 ms']);
  });

  it('keeps the order of request lines and every other line', async () => {
    const { lines } = await run(`
      const log = createLogger('info');
      const requests = requestLogger(log);
      requests.info({ n: 1 }, 'request');
      requests.info({ n: 2 }, 'request');
      log.warn('a warning');
      requests.info({ n: 3 }, 'request');
      log.info({ token: 'secret-token' }, 'shutting down');
    `);
    expect(messages(lines)).toEqual(['request', 'request', 'a warning', 'request', 'shutting down']);
    expect(lines.at(-1)).toContain('"token":"[redacted]"');
  });

  it('loses nothing held back when the process exits at once, the last line included', async () => {
    const { lines, exitCode } = await run(`
      const log = createLogger('info');
      const requests = requestLogger(log);
      for (let i = 0; i < 5; i++) requests.info({ n: i }, 'request');
      log.fatal('giving up');
      requests.info({ n: 5 }, 'request');
      process.exit(3);
    `);
    expect(exitCode).toBe(3);
    // Every line, in whatever order the write already under way and the exit's synchronous one landed.
    expect(messages(lines).sort()).toEqual(['giving up', 'request', 'request', 'request', 'request', 'request', 'request']);
  });
});
