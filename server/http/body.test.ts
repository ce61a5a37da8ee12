import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonBody, parseLimit } from './body.js';

/** Two servers that differ only in the body reader: ours, and express.json itself. */
let servers: { ours: string; express: string };
const closers: http.Server[] = [];

async function serve(reader: RequestHandler): Promise<string> {
  const app = express();
  app.post('/echo', reader, (req, res) => {
    res.json({ body: req.body === undefined ? '(undefined)' : req.body });
  });
  const errors: ErrorRequestHandler = (err, _req, res, _next) => {
    res.status(err.status ?? 500).json({ type: err.type ?? null });
  };
  app.use(errors);
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  servers = { ours: await serve(jsonBody('1kb')), express: await serve(express.json({ limit: '1kb' })) };
});
afterAll(() => closers.forEach((s) => s.close()));

/** A raw request through node:http, headers exactly as given. */
function send(base: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/echo`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = 'application/json';
const cases: [string, Record<string, string>, Buffer][] = [
  ['an object', { 'content-type': json }, Buffer.from('{"a":1,"b":[true,null]}')],
  ['an array', { 'content-type': json }, Buffer.from(' [1,2] ')],
  ['an empty body', { 'content-type': json }, Buffer.from('')],
  ['whitespace only', { 'content-type': json }, Buffer.from(' \n\t ')],
  ['a byte order mark alone', { 'content-type': json }, Buffer.from([0xef, 0xbb, 0xbf])],
  ['a string', { 'content-type': json }, Buffer.from('"x"')],
  ['a number', { 'content-type': json }, Buffer.from('42')],
  ['null', { 'content-type': json }, Buffer.from('null')],
  ['malformed JSON', { 'content-type': json }, Buffer.from('{"a":')],
  ['a byte order mark', { 'content-type': json }, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":true}')])],
  ['non-ASCII text', { 'content-type': 'application/json; charset=utf-8' }, Buffer.from('{"name":"café ✓"}')],
  ['charset in quotes and capitals', { 'content-type': 'Application/JSON; Charset="UTF-8"' }, Buffer.from('{"a":2}')],
  ['too large', { 'content-type': json }, Buffer.from(JSON.stringify({ a: 'x'.repeat(2000) }))],
  ['text/plain (not read)', { 'content-type': 'text/plain' }, Buffer.from('{"a":5}')],
  ['gzip (to express.json)', { 'content-type': json, 'content-encoding': 'gzip' }, Buffer.from('not gzip')],
  ['an unknown encoding', { 'content-type': json, 'content-encoding': 'zstd-ish' }, Buffer.from('{}')],
];

describe('jsonBody answers like express.json', () => {
  it.each(cases)('%s', async (_name, headers, body) => {
    const withLength = { ...headers, 'content-length': String(body.length) };
    const ours = await send(servers.ours, withLength, body);
    const theirs = await send(servers.express, withLength, body);
    expect(ours).toEqual(theirs);
  });

  it.each([
    ['UTF-16', 'application/json; charset=utf-16le', Buffer.from('{"a":3}', 'utf16le')],
    ['UTF-7', 'application/json; charset=utf-7', Buffer.from('{"a":3}')],
    ['Latin-1', 'application/json; charset=iso-8859-1', Buffer.from('{"a":4}')],
    ['a malformed Content-Type', 'application/json; charset="utf-8', Buffer.from('{"a":5}')],
  ])('refuses %s with 415 before reading the body', async (_name, type, body) => {
    const ours = await send(servers.ours, { 'content-type': type, 'content-length': String(body.length) }, body);
    expect(ours).toEqual({ status: 415, body: { type: null } });
  });

  it('reads a chunked body through express.json', async () => {
    const body = Buffer.from('{"chunked":true}');
    const ours = await send(servers.ours, { 'content-type': json, 'transfer-encoding': 'chunked' }, body);
    expect(ours).toEqual({ status: 200, body: { body: { chunked: true } } });
  });

  it('parses limits as the route table writes them', () => {
    expect([parseLimit('16kb'), parseLimit('1mb'), parseLimit('64mb'), parseLimit('10b')]).toEqual([16384, 1048576, 67108864, 10]);
    expect(() => parseLimit('lots')).toThrow(/not like/);
  });
});
