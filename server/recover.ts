import { recoverCommand, recoverFailed } from './access/recover.js';
import { accountHooks, createSignInRepo } from './signin/repo.js';

// `npm run recover -- <username>` (dist/server/recover.js): a composition root, like main.ts, so the
// account rules it runs are the server's own, second factors included.
recoverCommand((db) => accountHooks(createSignInRepo(db))).catch(recoverFailed);
