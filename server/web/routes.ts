import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Response } from 'express';
import { notFound } from '../errors.js';
import type { RouteTable } from '../http/routes.js';

let root: string | undefined;
/** The package root, found from this file both in the sources (server/web) and in the bundle (dist/server); looked up once. */
export function packageRoot(): string {
  if (root === undefined) {
    let dir = path.dirname(fileURLToPath(import.meta.url));
    while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
    root = dir;
  }
  return root;
}

export const defaultRendererDir = (): string => path.join(packageRoot(), 'dist', 'renderer');

/**
 * The dashboard page may load only its own script and styles: no inline script, no framing,
 * no base-tag or form redirection. Data images cover the empty favicon.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const ASSET_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.(js|css|map|svg|png|woff2)$/;

function setPageHeaders(res: Response): void {
  res.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  });
}

/**
 * Serves the built dashboard: hashed assets cached forever, and index.html (never cached) for every
 * page path, so a bookmarked /instances?state=testing opens the app. Registered last: any GET not
 * claimed by another route is a dashboard page, except under /api, which stays a JSON 404.
 */
export function registerWebRoutes(routes: RouteTable, rendererDir: string): void {
  const assetsDir = path.join(rendererDir, 'assets');

  routes.on('GET /assets/:file', { access: 'public' }, (req, res, { params }) => {
    const file = params.file ?? '';
    const full = path.join(assetsDir, file);
    const stat = ASSET_NAME.test(file) ? fs.statSync(full, { throwIfNoEntry: false }) : undefined;
    if (!stat?.isFile()) throw notFound('not found');
    // The app sends no ETags of its own (app.ts), so sendFile would send none: set the one it would
    // (size and mtime), which it then answers a matching If-None-Match with 304 by.
    res.set({
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
      ETag: `W/"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`,
    });
    res.sendFile(full, { cacheControl: false });
  });

  routes.on('GET /{*page}', { access: 'public' }, (req, res) => {
    if (req.path === '/api' || req.path.startsWith('/api/')) throw notFound('not found');
    setPageHeaders(res);
    res.set('Cache-Control', 'no-cache');
    let html: string;
    try {
      html = fs.readFileSync(path.join(rendererDir, 'index.html'), 'utf8');
    } catch {
      res
        .status(503)
        .type('text/plain')
        .send(`The homefleet dashboard is not built (nothing at ${rendererDir}). Run \`npm run build\`, then reload.\n`);
      return;
    }
    // Revalidated on every visit (no-cache): a weak ETag of the page lets the browser get a 304.
    res.set('ETag', `W/"${createHash('sha1').update(html).digest('base64url')}"`);
    res.type('html').send(html);
  });
}
