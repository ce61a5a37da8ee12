import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createHasher } from './hasher.js';

const sha256 = (parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest('hex');

describe('the upload hasher (a worker thread)', () => {
  it('gives the SHA-256 of every batch, in order, for uploads hashed at the same time', async () => {
    const hasher = createHasher();
    // Batches of odd sizes, some larger than a slab and some views into a larger buffer (as busboy's are).
    const batches = (seed: number) => Array.from({ length: 40 }, (_, i) => [randomBytes(1 + ((i * 7919 + seed) % 300_000)), randomBytes(5000).subarray(17, 4000)]);
    const a = batches(1);
    const b = batches(2);
    const [ha, hb] = [hasher.open(), hasher.open()];
    for (let i = 0; i < a.length; i++) await Promise.all([ha.update(a[i]!), hb.update(b[i]!)]);
    expect(await ha.digest()).toBe(sha256(a.flat()));
    expect(await hb.digest()).toBe(sha256(b.flat()));
  });

  it('hashes nothing to the empty SHA-256, and a dropped hash leaves the others whole', async () => {
    const hasher = createHasher();
    const dropped = hasher.open();
    const kept = hasher.open();
    await dropped.update([Buffer.from('half an upload')]);
    dropped.drop();
    await kept.update([Buffer.from('all of it')]);
    expect(await kept.digest()).toBe(sha256([Buffer.from('all of it')]));
    expect(await hasher.open().digest()).toBe(sha256([]));
  });
});
