import type { AppContext } from '../context.js';
import type { RouteTable } from '../http/routes.js';
import { createBackupService } from './service.js';

export function registerBackupRoutes(routes: RouteTable, ctx: AppContext): void {
  const backup = createBackupService(ctx);

  // The export carries raw job secrets, so it needs the same capability as changing them.
  routes.get('/api/export', { access: 'settings.manage' }, (_req, res) => {
    const doc = backup.exportDocument();
    res.attachment(`homefleet-backup-${doc.exported_at.slice(0, 10)}.json`);
    return doc;
  });

  // A 100,000-instance backup is about 26 MB of JSON.
  routes.post('/api/import', { access: 'settings.manage', bodyLimit: '64mb' }, (req) => backup.importDocument(req.body));
}
