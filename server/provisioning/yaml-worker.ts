import { parentPort } from 'node:worker_threads';
import { parseDocument } from 'yaml';
import { yamlProblem } from './cloud-config-yaml.js';

/**
 * The YAML thread (yaml-thread.ts): checks each cloud config body it is sent and answers what is
 * wrong with it, or null. Built as its own entry point: dist/server/yaml-worker.js, and
 * dist/electron/yaml-worker.cjs for the desktop app.
 */
parentPort?.on('message', ({ id, body }: { id: number; body: string }) => {
  parentPort!.postMessage({ id, problem: yamlProblem(body, parseDocument) ?? null });
});
