import express, { type ErrorRequestHandler } from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouteGroup } from './route-match.js';

// The route table's matcher against what Express 5's router did with the same paths: a real app on
// 127.0.0.1, each route answering its name and parameters.
let server: Server;
let base: string;
const seen: string[] = [];

beforeAll(async () => {
  const app = express();
  const first = new RouteGroup();
  const answer = (name: string) => (req: express.Request, res: express.Response) => res.json({ name, params: req.params });
  first.add('GET', '/api/hosts/enrollment-tokens', [answer('tokens')]);
  first.add('GET', '/api/hosts/:id', [answer('host')]);
  first.add('PUT', '/api/users/:id', [answer('user')]);
  first.add('GET', '/api/steps', [(_req, _res, next) => (seen.push('one'), next()), async (_req, _res, next) => (seen.push('two'), next()), answer('steps')]);
  first.add('GET', '/api/fails', [async () => Promise.reject(Object.assign(new Error('no'), { status: 418 }))]);
  app.use(first.dispatch);
  app.use('/api/late', (_req, res) => res.json({ name: 'middleware between groups' }));
  const second = new RouteGroup();
  second.add('GET', '/api/late/:x', [answer('late')]);
  second.add('GET', '/{*page}', [answer('page')]);
  app.use(second.dispatch);
  app.use((_req, res) => res.status(404).json({ name: 'none' }));
  app.use(((err, _req, res, _next) => res.status(err.status ?? 500).json({ error: err.message })) as ErrorRequestHandler);
  await new Promise<void>((resolve) => {
    server = app.listen(0, '127.0.0.1', () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const get = async (path: string, method = 'GET') => {
  const res = await fetch(base + path, { method });
  return { status: res.status, body: method === 'HEAD' ? null : await res.json() };
};

describe('RouteGroup', () => {
  it('matches literals before a parameter registered after them, and a parameter otherwise, percent-decoded', async () => {
    expect(await get('/api/hosts/enrollment-tokens')).toEqual({ status: 200, body: { name: 'tokens', params: {} } });
    expect(await get('/api/hosts/7')).toEqual({ status: 200, body: { name: 'host', params: { id: '7' } } });
    expect(await get('/api/hosts/a%20b')).toEqual({ status: 200, body: { name: 'host', params: { id: 'a b' } } });
  });

  it('ignores case and one trailing slash, serves HEAD with GET, and refuses empty segments', async () => {
    expect((await get('/API/Hosts/Enrollment-Tokens')).body.name).toBe('tokens');
    expect((await get('/api/hosts/7/')).body).toEqual({ name: 'host', params: { id: '7' } });
    expect((await get('/api/hosts/7', 'HEAD')).status).toBe(200);
    expect((await get('/api/hosts//')).body.name).toBe('page');
    expect((await get('/api/hosts/7', 'DELETE')).body.name).toBe('none');
  });

  it('a malformed parameter is a 400, also where only another method has the route', async () => {
    expect(await get('/api/hosts/%zz')).toEqual({ status: 400, body: { error: 'URI malformed' } });
    expect(await get('/api/users/%E0%A4%A')).toEqual({ status: 400, body: { error: 'URI malformed' } });
    expect((await get('/api/nothing/%zz')).body.name).toBe('page');
  });

  it('runs a route’s steps in turn, sync or async, and a rejected step reaches the error handler', async () => {
    seen.length = 0;
    expect((await get('/api/steps')).body.name).toBe('steps');
    expect(seen).toEqual(['one', 'two']);
    expect(await get('/api/fails')).toEqual({ status: 418, body: { error: 'no' } });
  });

  it('a middleware between two groups runs after the first group’s routes and before the second’s; the rest wildcard takes any path', async () => {
    expect((await get('/api/late/1')).body.name).toBe('middleware between groups');
    expect((await get('/')).body).toEqual({ name: 'page', params: {} });
    expect((await get('/instances/12/history')).body.name).toBe('page');
  });

  it('refuses a path form it does not understand', () => {
    expect(() => new RouteGroup().add('GET', '/api/:id?', [])).toThrow('route path not understood');
  });
});
