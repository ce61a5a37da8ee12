import * as z from 'zod';
import { LIVE_EVENT_TYPES } from '../contract/catalogue.js';
import { unauthorized } from '../errors.js';
import type { RouteTable } from '../http/routes.js';
import type { StreamCredential } from './credential.js';
import type { EventHub } from './hub.js';

// For the API document: what the stream reads and answers.
const documented = {
  documentedQuery: z.lazy(() =>
    z.object({
      last_event_id: z.string().optional().describe('The last event id seen, for a new connection that cannot send the Last-Event-ID header'),
    }),
  ),
  documentedResponse: {
    status: 200,
    contentType: 'text/event-stream',
    description:
      `Server-Sent Events: \`: connected\`, a comment every 15 s, events (${LIVE_EVENT_TYPES.join(', ')}) with ids, \`reset\` when missed events are gone, and \`revoked\` with a reason just before the stream ends. At most 5 streams per session or per API token and 10 per account (429); 1,000 in all, the last 50 for administrators (503).`,
  },
};

/** `GET /api/events`: PRODUCT.md's live event stream. */
export function registerEventRoutes(routes: RouteTable, hub: EventHub): void {
  // activity: false: "The stream does not count as activity for the idle timeout".
  routes.get('/api/events', { access: 'fleet.read', activity: false, ...documented }, (req, res) => {
    const { auth } = res.locals;
    if (auth?.kind !== 'session' && auth?.kind !== 'token') throw unauthorized('authentication required');
    // A browser's own reconnect sends the header; a new EventSource after a backoff can only use the query.
    const query = (req.query as Record<string, unknown>).last_event_id;
    const header = req.get('last-event-id') ?? (typeof query === 'string' ? query : undefined);
    // A personal API token's user.role is already min(token role, owner's role) (server/tokens/service.ts).
    const { user } = auth;
    const credential: StreamCredential = auth.kind === 'token'
      ? { kind: 'token', tokenId: auth.token.id, accountId: user.id, role: user.role }
      : { kind: 'session', sessionId: auth.session.id, accountId: user.id, role: user.role };
    hub.open(res, credential, header);
  });
}
