import { describe, expect, it } from 'vitest';
import { heartbeatBody } from '../../test/helpers/hosts.js';
import { HttpError } from '../errors.js';
import { fieldErrors } from '../http/validate.js';
import { HeartbeatBody, parseHeartbeat } from './schema.js';

const guest = (vmid: number, extra: Record<string, unknown> = {}) => ({ vmid, type: 'qemu', name: `g${vmid}`, status: 'running', ...extra });

/** Bodies the heartbeat route may get: good ones, and ones wrong in the envelope, in a guest, or both. */
const CASES: [string, unknown][] = [
  ['a minimal heartbeat', heartbeatBody()],
  ['guests', heartbeatBody({ guests: [guest(100), guest(101, { type: 'lxc' })] })],
  ['more guests than one slice', heartbeatBody({ guests: Array.from({ length: 1203 }, (_, i) => guest(100 + i)) })],
  ['a bad guest in the second slice', heartbeatBody({ guests: Array.from({ length: 700 }, (_, i) => guest(100 + i, i === 650 ? { vmid: 'x' } : {})) })],
  ['a bad envelope and a bad guest', heartbeatBody({ agent_version: 7, guests: [guest(100), guest(-1)] })],
  ['guests not an array', heartbeatBody({ guests: 'many' })],
  ['too many guests', heartbeatBody({ guests: Array.from({ length: 10_001 }, (_, i) => guest(i + 1)) })],
  ['no guests', { ...heartbeatBody(), guests: undefined }],
  ['not an object', [1, 2]],
  ['null', null],
  ['storages and their hash', heartbeatBody({ storages: [{ storage: 'local', type: 'dir', content: ['iso', 'vztmpl'], avail: 1, total: 2, active: true, shared: false }], storage_sha256: 'a'.repeat(64) })],
  ['storages without sizes, a null hash', heartbeatBody({ storages: [{ storage: 'nfs', type: 'nfs', content: [], active: false, shared: true }], storage_sha256: null })],
  ['bad storages and a bad guest', heartbeatBody({ storages: [{ storage: 'x y', type: 'dir', content: 'iso', active: 1, shared: false }], storage_sha256: 'z', guests: [guest(-1)] })],
  ['unknown fields', heartbeatBody({ surprise: true, guests: [guest(100, { surprise: 1 })] })],
];

/** What the route would answer: the parsed body, or the 400's field errors. */
async function viaRoute(body: unknown) {
  try {
    return { ok: await parseHeartbeat(body) };
  } catch (err) {
    return { errors: (err as HttpError).body };
  }
}

describe('the heartbeat parses its body a slice at a time, exactly as its declared schema would', () => {
  it.each(CASES)('%s', async (_name, body) => {
    const declared = HeartbeatBody.safeParse(body);
    const actual = await viaRoute(body);
    if (declared.success) expect(actual).toEqual({ ok: declared.data });
    else {
      // The same fields and messages; the order may differ (the guests are checked after the envelope).
      const expected = fieldErrors(declared.error);
      expect(actual.errors?.errors).toEqual(expect.arrayContaining(expected));
      expect(actual.errors?.errors).toHaveLength(expected.length);
    }
  });
});
