import { describe, expect, it } from 'vitest';
import { youngCollectionEvery } from './memory.js';

const turnEnds = () => new Promise((resolve) => setImmediate(resolve));

describe('youngCollectionEvery', () => {
  it('collects after every N calls, at the end of the turn, at most once a turn; calls past N count toward the next', async () => {
    let collections = 0;
    const changed = youngCollectionEvery(4, () => collections++);
    for (let i = 0; i < 3; i++) changed();
    await turnEnds();
    expect(collections).toBe(0);
    changed();
    // Not inside the turn that made the changes: its work is still alive.
    expect(collections).toBe(0);
    await turnEnds();
    expect(collections).toBe(1);
    for (let i = 0; i < 6; i++) changed();
    await turnEnds();
    expect(collections).toBe(2);
    // 2 of those 6 count toward the next.
    changed();
    await turnEnds();
    expect(collections).toBe(2);
    changed();
    await turnEnds();
    expect(collections).toBe(3);
  });
});
