import type { LogsCommand } from '../../contract/operations.js';
import { queuedKind } from './queued.js';

/** POST /api/hosts/:id/logs: the agent answers with the last 200 lines of its own journal as `output`. */
export const logs = queuedKind<LogsCommand>({
  type: 'logs',
  render: (op) => ({ type: 'logs', operation_id: op.id }),
});
