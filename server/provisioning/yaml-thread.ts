import type { Worker } from 'node:worker_threads';
import { builtHelper, builtin } from '../builtin.js';
import { yamlProblem } from './cloud-config-yaml.js';

/**
 * A cloud config's YAML checked on a thread of its own (yaml-worker.ts): parsing 64 KiB takes 100 to
 * 300 ms and cannot be sliced, and on the event loop a health check waited for it (2 s under load).
 * One thread, made at the first check and kept (unref'd), checks one body at a time. Where it cannot
 * start or dies (a build without the file, the desktop app's archive), the check runs on the event
 * loop as before: the answer is the same, only the wait differs.
 */
let worker: Worker | null | undefined;
let serial = 0;
const waiting = new Map<number, { body: string; resolve: (problem: string | undefined) => void }>();

async function onEventLoop(body: string): Promise<string | undefined> {
  // yaml is CommonJS: its exports are the default export of a bundled import.
  const { parseDocument } = (await import('yaml')).default;
  return yamlProblem(body, parseDocument);
}

function thread(): Worker | null {
  if (worker !== undefined) return worker;
  const file = builtHelper('yaml-worker');
  if (!file) return (worker = null);
  const made: Worker = new (builtin('node:worker_threads').Worker)(file);
  made.unref();
  made.on('message', ({ id, problem }: { id: number; problem: string | null }) => {
    const asked = waiting.get(id);
    waiting.delete(id);
    asked?.resolve(problem ?? undefined);
  });
  const gone = () => {
    if (worker !== made) return;
    worker = null;
    // What it had not answered is checked here instead.
    for (const [id, asked] of waiting) {
      waiting.delete(id);
      void onEventLoop(asked.body).then(asked.resolve);
    }
  };
  made.on('error', gone);
  made.on('exit', gone);
  return (worker = made);
}

/** What is wrong with the body's YAML (cloud-config-yaml.ts), checked off the event loop where it can be. */
export function yamlProblemOffThread(body: string): Promise<string | undefined> {
  const to = thread();
  if (!to) return onEventLoop(body);
  return new Promise((resolve) => {
    const id = ++serial;
    waiting.set(id, { body, resolve });
    to.postMessage({ id, body });
  });
}
