import type { Request, RequestHandler } from 'express';
import type { Socket } from 'node:net';
import { userOf } from '../http/locals.js';
import type { RouteTable } from '../http/routes.js';
import type { FileCacheService } from './service.js';

/** How long a refused upload's connection is still read after its answer. */
const LINGER_MS = 2000;

/**
 * An upload answered before its body is read (refused, too large, the cache full) would otherwise
 * have the rest of its body, up to gigabytes, read and thrown away to keep the connection: it is closed
 * instead once the answer is sent. Not at once: a socket closed with unread bytes resets the
 * connection, and a client still sending then loses the answer (a browser shows a network error, not
 * "file too large"). So the server half-closes, reads and drops what still comes for a moment (a
 * lingering close, as Go's server does), then closes.
 */
const closeAfterAnswer: RequestHandler = (req, res, next) => {
  res.setHeader('Connection', 'close');
  const socket = req.socket as Socket & { destroySoon(): void };
  const destroySoon = socket.destroySoon;
  // Node's server calls destroySoon on this socket once the answer is sent with Connection: close.
  socket.destroySoon = function (this: Socket & { destroySoon(): void }) {
    if (req.complete) return destroySoon.call(this);
    linger(req, this);
  };
  next();
};

function linger(req: Request, socket: Socket): void {
  socket.end();
  req.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once('close', () => clearTimeout(timer));
}

/** The file cache: uploads and deletes need `hosts.manage`, the list `hosts.read` (PRODUCT.md "Host storage, downloads and the file cache"). */
export function registerFileRoutes(routes: RouteTable, files: FileCacheService): void {
  routes.use('/api/files', (req, res, next) => (req.method === 'POST' && req.path === '/' ? closeAfterAnswer(req, res, next) : next()));
  // The body is multipart, read and streamed to disk by the service: no JSON body reader.
  routes.on('POST /api/files', { access: 'hosts.manage', bodyLimit: false }, (req, res) => files.upload(req, userOf(res).username));
  routes.on('GET /api/files', { access: 'hosts.read' }, () => files.list());
  routes.on('DELETE /api/files/:id', { access: 'hosts.manage' }, (_req, res, { params }) => {
    files.remove(params.id);
    res.status(204).end();
  });
}
