import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { multipart } from '../../test/helpers/multipart.js';
import { createAuditLog } from '../audit.js';
import { defaultConfig } from '../config.js';
import { createContext, type AppContext } from '../context.js';
import { openDatabase } from '../db/database.js';
import { HttpError } from '../errors.js';
import { createLogger } from '../logger.js';
import { systemClock } from '../time.js';
import { createFileCache, type FileCacheService } from './service.js';

// The cache with the operations' answer to "does a pending or sent upload need this file?" (s39-host
// gives the real one through server/services.ts): files that are needed are neither evicted nor deleted.
// A real SQLite database, a real folder, uploads over real HTTP on 127.0.0.1.

const MiB = 1024 * 1024;
let ctx: AppContext;
let dir: string;
let cache: FileCacheService;
let needed: Set<number>;
let server: http.Server;
let url: string;

beforeEach(async () => {
  const db = openDatabase(':memory:');
  ctx = createContext({ db, config: defaultConfig({ uploadMaxBytes: 4 * MiB, fileCacheMaxBytes: 6 * MiB }), clock: systemClock, logger: createLogger('silent') });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-files-unit-'));
  needed = new Set();
  cache = createFileCache(ctx, createAuditLog(ctx), { inUse: (id) => needed.has(id) }, { dir });
  server = http.createServer((req, res) => {
    cache.upload(req, 'alice').then(
      (file) => res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(file)),
      (err: HttpError) => res.writeHead(err.status ?? 500, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(err.body ?? { error: String(err) })),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  ctx.commits.flush();
  ctx.db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function upload(data: Buffer, filename: string): Promise<{ status: number; body: any }> {
  const { body, contentType } = multipart([{ name: 'file', filename, data }]);
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body: new Uint8Array(body) });
  return { status: res.status, body: await res.json() };
}
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const names = () => cache.list().files.map((f) => f.name);

describe('files a pending push needs', () => {
  it('are not deleted: 409 while needed, 204 (gone, bytes and all) once not', async () => {
    const data = randomBytes(1000);
    const { id } = (await upload(data, 'needed.iso')).body;
    needed.add(id);
    expect(() => cache.remove(id)).toThrow(expect.objectContaining({ status: 409, body: { error: 'file is needed by a push that has not finished' } }));
    expect(fs.existsSync(path.join(dir, sha256(data)))).toBe(true);
    needed.delete(id);
    cache.remove(id);
    ctx.commits.flush();
    expect(fs.existsSync(path.join(dir, sha256(data)))).toBe(false);
    expect(() => cache.remove(id)).toThrow(expect.objectContaining({ status: 404 }));
  });

  it('are passed over by eviction, which takes the least recently used of the others', async () => {
    const ids = [];
    for (const name of ['a.iso', 'b.iso', 'c.iso']) ids.push((await upload(randomBytes(2 * MiB), name)).body.id as number);
    needed.add(ids[0]!);
    expect((await upload(randomBytes(MiB), 'd.iso')).status).toBe(201);
    expect(names()).toEqual(['d.iso', 'c.iso', 'a.iso']);
  });

  it('leave 507 {"error":"file cache full"} when nothing else can go, evicting nothing', async () => {
    const ids = [];
    for (const name of ['a.iso', 'b.iso', 'c.iso']) ids.push((await upload(randomBytes(2 * MiB), name)).body.id as number);
    needed.add(ids[0]!).add(ids[2]!);
    // 3 MiB would need two files gone; only b may go: nothing is evicted for an upload that cannot fit.
    expect(await upload(randomBytes(3 * MiB), 'd.iso')).toEqual({ status: 507, body: { error: 'file cache full' } });
    expect(names()).toEqual(['c.iso', 'b.iso', 'a.iso']);
    expect(fs.readdirSync(dir)).toHaveLength(3);
  });
});

describe('the service other features use', () => {
  it('get answers the record with the path of its bytes, touch makes it the most recently used', async () => {
    const data = randomBytes(5000);
    const first = (await upload(data, 'first.iso')).body;
    await upload(randomBytes(10), 'second.iso');
    expect(names()).toEqual(['second.iso', 'first.iso']);
    const got = cache.get(first.id)!;
    expect(got).toEqual({ ...first, path: path.join(dir, sha256(data)) });
    expect(fs.readFileSync(got.path).equals(data)).toBe(true);
    await new Promise((r) => setTimeout(r, 5));
    cache.touch(first.id);
    expect(names()).toEqual(['first.iso', 'second.iso']);
    expect(cache.get(9999)).toBeUndefined();
  });

  it('removes at start what a crash left: temp files, and bytes no row names', () => {
    fs.writeFileSync(path.join(dir, '.upload-0b7e1a52-6f5c-4c43-9a52-2d7a5e1f0c11.partial'), 'half');
    fs.writeFileSync(path.join(dir, 'a'.repeat(64)), 'orphan');
    fs.writeFileSync(path.join(dir, 'README'), 'not ours');
    createFileCache(ctx, createAuditLog(ctx), { inUse: () => false }, { dir });
    expect(fs.readdirSync(dir)).toEqual(['README']);
  });
});
