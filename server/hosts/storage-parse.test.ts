import { describe, expect, it } from 'vitest';
import { StorageVolumesBody } from '../contract/inputs/storage.js';
import { HttpError } from '../errors.js';
import { fieldErrors } from '../http/validate.js';
import { parseStorageVolumes } from './schema.js';

const volume = (i: number, extra: Record<string, unknown> = {}) => ({ volid: `local:iso/v${i}.iso`, format: 'iso', size: 1000 + i, ctime: 1_732_000_000, ...extra });

/** Bodies POST /api/agent/storage may get: good ones, and ones wrong in the envelope, in a volume, or both. */
const CASES: [string, unknown][] = [
  ['no volumes', { storage: 'local', volumes: [] }],
  ['volumes, ctime absent or null', { storage: 'local', volumes: [volume(1), volume(2, { ctime: undefined }), volume(3, { ctime: null })] }],
  ['more volumes than one slice', { storage: 'local', volumes: Array.from({ length: 2345 }, (_, i) => volume(i)) }],
  ['a bad volume in the third slice', { storage: 'local', volumes: Array.from({ length: 2500 }, (_, i) => volume(i, i === 2100 ? { size: -5 } : {})) }],
  ['a bad envelope and bad volumes', { storage: '../x', volumes: [volume(1, { volid: 'no volume' }), volume(2, { format: 'ISO!' })] }],
  ['volumes not a list', { storage: 'local', volumes: 'many' }],
  ['too many volumes', { storage: 'local', volumes: Array.from({ length: 10_001 }, (_, i) => volume(i)) }],
  ['no storage', { volumes: [volume(1)] }],
  ['not an object', [1, 2]],
  ['null', null],
  ['unknown fields', { storage: 'local', surprise: 1, volumes: [volume(1, { surprise: true })] }],
];

async function viaRoute(body: unknown) {
  try {
    return { ok: await parseStorageVolumes(body) };
  } catch (err) {
    return { errors: (err as HttpError).body };
  }
}

describe('POST /api/agent/storage parses its volumes a slice at a time, exactly as its declared schema would', () => {
  it.each(CASES)('%s', async (_name, body) => {
    const declared = StorageVolumesBody.safeParse(body);
    const actual = await viaRoute(body);
    if (declared.success) expect(actual).toEqual({ ok: declared.data });
    else {
      const expected = fieldErrors(declared.error);
      expect(actual.errors?.errors).toEqual(expect.arrayContaining(expected));
      expect(actual.errors?.errors).toHaveLength(expected.length);
    }
  });
});
