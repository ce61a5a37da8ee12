import { describe, expect, it } from 'vitest';
import { createFatalHandler, fatalLine, type FatalDeps } from './fatal.js';

function recorder(write: FatalDeps['write'] = (_line, done) => done()) {
  const calls = { lines: [] as string[], exits: [] as number[], kills: 0 };
  const handle = createFatalHandler({
    now: () => 1_700_000_000_000,
    write: (line, done) => (calls.lines.push(line), write(line, done)),
    exit: (code) => calls.exits.push(code),
    kill: () => calls.kills++,
    giveUpMs: 50,
  });
  return { handle, calls };
}

describe('the fatal line', () => {
  it('says why the process stops, with the error type, message and stack, and nothing else the error carries', () => {
    const err = Object.assign(new TypeError("Encoding not recognized: 'ascii'"), { body: '{"password":"hunter2-secret"}', headers: { cookie: 'homefleet_session=abc' } });
    const line = fatalLine('uncaughtException', err, 1_700_000_000_000);
    expect(line.endsWith('\n')).toBe(true);
    expect(JSON.parse(line)).toEqual({
      level: 60,
      time: 1_700_000_000_000,
      msg: "homefleet stopped by an uncaught exception: Encoding not recognized: 'ascii'",
      err: { type: 'TypeError', message: "Encoding not recognized: 'ascii'", stack: err.stack },
    });
    expect(line).not.toContain('hunter2');
    expect(line).not.toContain('homefleet_session');
  });

  it('words a rejection with a value that is not an Error', () => {
    expect(JSON.parse(fatalLine('unhandledRejection', 42, 1))).toEqual({ level: 60, time: 1, msg: 'homefleet stopped by an unhandled promise rejection: 42', err: { type: 'number', message: '42' } });
    const unprintable = { toString: () => { throw new Error('no'); } };
    expect(JSON.parse(fatalLine('unhandledRejection', unprintable, 1)).err).toEqual({ type: 'object', message: '(cannot be shown)' });
  });

  it('stays one line below 4 KiB, what a pipe takes in one piece', () => {
    const err = new Error('\u0001'.repeat(10_000));
    err.stack = `Error\n${'    at somewhere (file.js:1:1)\n'.repeat(1000)}`;
    const line = fatalLine('uncaughtException', err, 1);
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(4000);
    expect(line.indexOf('\n')).toBe(line.length - 1);
    expect(JSON.parse(line).err.stack).toMatch(/^Error\n {4}at somewhere/);
  });
});

describe('the fatal handler', () => {
  it('writes the line, then exits with status 1; a second error while stopping is not written', async () => {
    const { handle, calls } = recorder();
    handle('uncaughtException', new Error('first'));
    handle('unhandledRejection', new Error('second'));
    expect(calls.lines.map((l) => JSON.parse(l).msg)).toEqual(['homefleet stopped by an uncaught exception: first']);
    expect(calls.exits).toEqual([1]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(calls.kills).toBe(0);
  });

  it('kills the process when the line cannot be written (a full pipe nobody reads)', async () => {
    const { handle, calls } = recorder(() => undefined);
    handle('unhandledRejection', new Error('stuck'));
    expect(calls.kills).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(calls).toMatchObject({ exits: [], kills: 1 });
  });
});
