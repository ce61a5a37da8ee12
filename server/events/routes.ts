import { EventsQuery } from '../contract/inputs/events.js';
import { unauthorized } from '../errors.js';
import type { RouteTable } from '../http/routes.js';
import type { StreamCredential } from './credential.js';
import type { EventHub } from './hub.js';

/** `GET /api/events`: PRODUCT.md's live event stream. */
export function registerEventRoutes(routes: RouteTable, hub: EventHub): void {
  // activity: false: "The stream does not count as activity for the idle timeout".
  routes.on('GET /api/events', { access: 'fleet.read', activity: false, query: EventsQuery }, (req, res, { query }) => {
    const { auth } = res.locals;
    if (auth?.kind !== 'session' && auth?.kind !== 'token') throw unauthorized('authentication required');
    // A browser's own reconnect sends the header; a new EventSource after a backoff can only use the query.
    const header = req.get('last-event-id') ?? query.last_event_id;
    // A personal API token's user.role is already min(token role, owner's role) (server/tokens/service.ts).
    const { user } = auth;
    const credential: StreamCredential = auth.kind === 'token'
      ? { kind: 'token', tokenId: auth.token.id, accountId: user.id, role: user.role }
      : { kind: 'session', sessionId: auth.session.id, accountId: user.id, role: user.role };
    hub.open(res, credential, header);
  });
}
