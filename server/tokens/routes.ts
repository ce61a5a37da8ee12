import * as z from 'zod';
import { userOf } from '../http/locals.js';
import type { RouteTable } from '../http/routes.js';
import { parseIntegerParam } from '../http/validate.js';
import { ApiTokenView, CreatedApiTokenView, TokenCreateBody, TokenListQuery } from './schema.js';
import type { TokenService } from './service.js';

/**
 * `/api/tokens`: one's own personal API tokens (capability `self`); administrators (`users.manage`)
 * may list and revoke everyone's. These routes need a browser session: a token cannot make tokens.
 */
export function registerTokenRoutes(routes: RouteTable, tokens: TokenService): void {
  routes.get('/api/tokens', { access: 'self', query: TokenListQuery, documentedResponse: { status: 200, schema: z.lazy(() => z.array(ApiTokenView)) } }, (req, res) => {
    const query = req.query as TokenListQuery;
    return tokens.list(userOf(res), query.user === 'all');
  });

  routes.post('/api/tokens', { access: 'self', body: TokenCreateBody, documentedResponse: { status: 201, schema: CreatedApiTokenView } }, (req, res) => {
    const created = tokens.create(req.body, userOf(res));
    res.status(201).set('Cache-Control', 'no-store');
    return created;
  });

  routes.delete('/api/tokens/:id', { access: 'self', documentedResponse: { status: 204, description: 'Revoked' } }, (req, res) => {
    tokens.revoke(parseIntegerParam(req.params.id, 'invalid id'), userOf(res));
    res.status(204).end();
  });
}
