// The script runner of build/bats.mjs. The reporter tests' small node scripts (reading what a mock
// recorded, building a command's JSON: `node_e` in reporter/test/node_e.bash) run in the runner's
// process instead of in a node each: a node start costs 17 ms of CPU, and the suite asks hundreds
// of times (about 5 of its 60 CPU-seconds).
//
// A script comes over a Unix socket in a private folder, as an HTTP POST (curl speaks it) whose body
// is NUL-terminated fields: the script, the number of its arguments, the arguments, then the caller's
// environment (NAME=value each). The script sees them as `process.argv[1…]` and `process.env`; it
// writes with `console` or `process.stdout`/`process.stderr` and ends with `process.exit` or by
// returning, and it has `require`. It has no stdin and no working folder of its own (paths are
// absolute), and it must finish synchronously. The answer is its stdout, its stderr and its exit
// code, each ended by a NUL.
import { Console } from 'node:console';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import vm from 'node:vm';

class Exit {
  constructor(code) {
    this.code = code;
  }
}

/** Runs one script in `context`, whose globals are its own (a `new Function` in it sees them too); returns the answer. */
function run(context, script, args, env) {
  let stdout = '';
  let stderr = '';
  const out = { write: (text) => ((stdout += text), true) };
  const err = { write: (text) => ((stderr += text), true) };
  const sink = (stream) => new Writable({ write: (chunk, _encoding, done) => (stream.write(String(chunk)), done()) });
  const console = new Console({ stdout: sink(out), stderr: sink(err) });
  const process = {
    argv: [globalThis.process.execPath, ...args],
    env,
    stdout: out,
    stderr: err,
    exit: (code = 0) => {
      throw new Exit(code);
    },
  };
  let code = 0;
  Object.assign(context, { process, console });
  try {
    // In a function, so that one script's top-level declarations are not the next one's.
    vm.runInContext(`(function () {\n${script}\n})();`, context);
  } catch (error) {
    if (error instanceof Exit) code = error.code;
    else {
      stderr += `${error?.stack ?? error}\n`;
      code = 1;
    }
  }
  return `${stdout}\0${stderr}\0${code}\0`;
}

/** Listens in a new private folder; `socket` is the path to hand the tests, `close` removes it. */
export function startScriptRunner(root) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bats-node-'));
  const socket = path.join(dir, 'socket');
  const context = vm.createContext({ require: createRequire(path.join(root, 'package.json')), Buffer });
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const [script = '', count = '0', ...rest] = Buffer.concat(chunks).toString('utf8').split('\0').slice(0, -1);
      const args = rest.slice(0, Number(count));
      const env = Object.fromEntries(rest.slice(Number(count)).map((entry) => /^([^=]*)=(.*)$/s.exec(entry)?.slice(1) ?? [entry, '']));
      res.end(run(context, script, args, env));
    });
  });
  server.listen(socket);
  return {
    socket,
    close() {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
