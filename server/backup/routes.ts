import type { RequestHandler } from 'express';
import fs from 'node:fs';
import { nameOf, type AuditLog } from '../audit.js';
import type { SnapshotList, SnapshotTaken } from '../contract/backup.js';
import { HttpError } from '../errors.js';
import type { RouteTable } from '../http/routes.js';
import { collectGarbage } from '../memory.js';
import type { BackupService } from './service.js';
import type { PreImport, SnapshotService } from './snapshots.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** The snapshot taken before this import (started early for a large body). */
      preImport?: PreImport;
      /** Set once the import is written: its snapshot is kept. */
      imported?: boolean;
    }
  }
}

export function registerBackupRoutes(routes: RouteTable, backup: BackupService, snapshots: SnapshotService, audit: AuditLog): void {

  // The export carries raw job secrets, so it needs the same capability as changing them.
  routes.on('GET /api/export', { access: 'settings.manage' }, (_req, res) => {
    const doc = backup.exportDocument();
    res.attachment(`homefleet-backup-${doc.exported_at.slice(0, 10)}.json`);
    return doc;
  });

  // A 100,000-instance backup is about 26 MB of JSON. For a large body the snapshot of what it
  // replaces starts as soon as the request is let in, so the copy runs while the body arrives and is
  // checked; a small body is checked first, and a file that does not validate costs no snapshot.
  // Imports take turns (snapshot, then write), so each pre-import snapshot holds what that import replaced.
  const EAGER_SNAPSHOT_BYTES = 1024 * 1024;
  let turn: Promise<void> = Promise.resolve();
  const startSnapshot: RequestHandler = (req, res, next) => {
    const eager = Number(req.get('content-length') ?? 0) >= EAGER_SNAPSHOT_BYTES;
    const previous = turn;
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    turn = previous.then(() => mine);
    let closed = false;
    res.on('close', () => {
      closed = true;
      // No import (a bad file, a body that is not JSON, a dropped connection): no pre-import snapshot.
      if (!res.locals.imported) res.locals.preImport?.cancel();
      done();
    });
    void previous.then(() => {
      if (closed) return;
      if (eager) res.locals.preImport = snapshots.beforeImport();
      next();
    });
  };
  routes.on('POST /api/import', { access: 'settings.manage', bodyLimit: '64mb', rawBody: true, before: [startSnapshot] }, async (req, res) => {
    const prepared = await backup.prepare(req.body);
    try {
      const preImport = (res.locals.preImport ??= snapshots.beforeImport());
      try {
        await preImport.ready;
      } catch (err) {
        throw new HttpError(503, { error: `nothing was imported: the snapshot before the import failed (${(err as Error).message})` });
      }
      const result = await prepared.write();
      res.locals.imported = true;
      // After the answer is sent: give back the import's memory before the next one (see memory.ts).
      setImmediate(collectGarbage);
      return result;
    } finally {
      if (!res.locals.imported) prepared.cancel();
    }
  });

  // Whole-database snapshots: a download is the whole database (password hashes, secrets), so administrators only.
  routes.on('GET /api/snapshots', { access: 'settings.manage' }, (): SnapshotList => ({
    enabled: snapshots.enabled,
    ...(snapshots.enabled ? {} : { reason: 'the database is in memory' }),
    directory: snapshots.directory,
    interval_hours: snapshots.intervalHours,
    keep: snapshots.keep,
    snapshots: snapshots.list(),
  }));

  routes.on('POST /api/snapshots', { access: 'settings.manage' }, async (req, res): Promise<SnapshotTaken> => {
    const snapshot = await snapshots.take('manual');
    // A snapshot changes no row: its entry is written on its own once the file is complete.
    const subject = { type: 'snapshot', id: snapshot.name, name: snapshot.name };
    audit.write({ action: 'request', subject, summary: `${nameOf()} took snapshot ${snapshot.name}` });
    return { snapshot };
  });

  // A download is the whole database: a browser session only, never a personal API token, which a
  // script keeps on disk and which outlives no password check (a token got every hash this way).
  routes.on('GET /api/snapshots/:name', { access: 'settings.manage', credentials: ['session'] }, (req, res, { params }) => {
    const file = snapshots.file(params.name);
    const size = fs.statSync(file).size;
    res.set({ 'content-type': 'application/vnd.sqlite3', 'content-length': String(size), 'cache-control': 'no-store' });
    res.attachment(params.name);
    const stream = fs.createReadStream(file);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  });
}
