import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { CONTENT_SECURITY_POLICY, defaultRendererDir } from './routes.js';

// A renderer folder of our own, so these tests do not depend on (or race with) a real build.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-web-'));
const INDEX = '<!doctype html><title>homefleet</title><script type="module" src="/assets/app-ABC123.js"></script>';
fs.mkdirSync(path.join(dir, 'assets'));
fs.writeFileSync(path.join(dir, 'index.html'), INDEX);
fs.writeFileSync(path.join(dir, 'assets', 'app-ABC123.js'), 'console.log("hi")');
fs.writeFileSync(path.join(dir, 'assets', 'app-ABC123.css'), 'body{}');
fs.writeFileSync(path.join(dir, 'secret.txt'), 'not an asset');

let server: TestServer;
let unbuilt: TestServer;

/** The status of a GET with If-None-Match. */
function conditionalStatus(url: string, etag: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(`${server.baseUrl}${url}`, { headers: { 'if-none-match': etag } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      })
      .on('error', reject);
  });
}
beforeAll(async () => {
  server = await startServer({ rendererDir: dir });
  unbuilt = await startServer({ rendererDir: path.join(dir, 'missing') });
});
afterAll(async () => {
  await server.stop();
  await unbuilt.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the dashboard pages', () => {
  it.each(['/', '/login', '/instances', '/instances/101', '/instances/new?x=1', '/jobs', '/jobs/2', '/settings', '/users', '/audit', '/telemetry', '/password', '/anything/else'])(
    'GET %s answers index.html, never cached, with the strict policy',
    async (page) => {
      const res = await server.client.get(page);
      expect(res.status).toBe(200);
      expect(res.text).toBe(INDEX);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    },
  );

  it('the policy allows only same-origin scripts, styles and connections, and no framing', () => {
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe');
  });

  it('the page carries a weak ETag and answers 304 to it; JSON API answers carry none', async () => {
    const page = await server.client.get('/instances');
    const etag = page.headers.get('etag');
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    // node:http, not fetch: fetch adds Cache-Control: no-cache to a conditional request.
    expect(await conditionalStatus('/instances', etag!)).toBe(304);
    const asset = await server.client.get('/assets/app-ABC123.js');
    const assetTag = asset.headers.get('etag');
    expect(assetTag).toMatch(/^W\/"[0-9a-f]+-[0-9a-f]+"$/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await conditionalStatus('/assets/app-ABC123.js', assetTag!)).toBe(304);
    expect(await conditionalStatus('/assets/app-ABC123.js', 'W/"0-0"')).toBe(200);
    for (const url of ['/api/instances', '/api/instances/stacks', '/api/health', '/api/nothing']) {
      const res = await server.client.get(url);
      expect(res.headers.get('etag'), url).toBeNull();
    }
  });

  it('unknown /api paths stay a JSON 404, not the page', async () => {
    for (const url of ['/api/nothing', '/api', '/api/instances/1/nope']) {
      const res = await server.client.get(url);
      expect(res.status, url).toBe(404);
      expect(res.body, url).toEqual({ error: 'not found' });
    }
  });

  it('API routes still answer JSON', async () => {
    const res = await server.client.get('/api/health');
    expect(res.body).toMatchObject({ status: 'ok' });
  });
});

describe('the hashed assets', () => {
  it('are served with their type and cached for a year as immutable', async () => {
    const js = await server.client.get('/assets/app-ABC123.js');
    expect(js.status).toBe(200);
    expect(js.text).toBe('console.log("hi")');
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const css = await server.client.get('/assets/app-ABC123.css');
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('a missing asset is a 404, and nothing outside the assets folder is reachable', async () => {
    for (const url of ['/assets/app-NOPE.js', '/assets/..%2Fsecret.txt', '/assets/%2e%2e%2fsecret.txt', '/assets/../secret.txt', '/assets/.hidden.js']) {
      const res = await server.client.get(url);
      expect(res.text, url).not.toContain('not an asset');
      if (url.startsWith('/assets/..')) continue; // normalised by fetch to /secret.txt, which is a page path
      expect(res.status, url).toBe(404);
    }
  });
});

describe('without a built renderer', () => {
  it('answers 503 with a message that says to run npm run build', async () => {
    const res = await unbuilt.client.get('/instances');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toContain('npm run build');
  });
});

describe('the renderer folder', () => {
  it('defaults to dist/renderer in the package root', () => {
    expect(defaultRendererDir()).toBe(path.resolve(import.meta.dirname, '../../dist/renderer'));
  });
});
