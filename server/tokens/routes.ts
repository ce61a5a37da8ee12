import { userOf } from '../http/locals.js';
import type { RouteTable } from '../http/routes.js';
import { TokenCreateBody, TokenListQuery } from '../contract/inputs/tokens.js';
import { ApiTokenView, CreatedApiTokenView } from './schema.js';
import * as z from 'zod';
import type { TokenService } from './service.js';

/**
 * `/api/tokens`: one's own personal API tokens (capability `self`); administrators (`users.manage`)
 * may list and revoke everyone's. These routes need a browser session: a token cannot make tokens.
 */
export function registerTokenRoutes(routes: RouteTable, tokens: TokenService): void {
  routes.on('GET /api/tokens', { access: 'self', query: TokenListQuery, answer: z.lazy(() => z.array(ApiTokenView)) }, (_req, res, { query }) => tokens.list(userOf(res), query.user === 'all'));

  routes.on('POST /api/tokens', { access: 'self', body: TokenCreateBody, answer: CreatedApiTokenView }, (req, res, { body }) => {
    const created = tokens.create(body, userOf(res));
    res.status(201).set('Cache-Control', 'no-store');
    return created;
  });

  routes.on('DELETE /api/tokens/:id', { access: 'self' }, (req, res, { params }) => {
    tokens.revoke(params.id, userOf(res));
    res.status(204).end();
  });
}
