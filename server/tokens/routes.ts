import type { Request, Response } from 'express';
import type { AccountService } from '../access/accounts.js';
import type { AppContext } from '../context.js';
import { invalidToken, unauthorized } from '../errors.js';
import type { RouteTable } from '../http/routes.js';
import { parseIntegerParam } from '../http/validate.js';
import { bearerToken } from './guard.js';
import * as z from 'zod';
import { ApiTokenView, CreatedApiTokenView, TokenCreateBody, TokenListQuery } from './schema.js';
import { createTokenService, TOKEN_PREFIX, type TokenService } from './service.js';

function signedIn(res: Response) {
  const user = res.locals.user;
  if (!user) throw unauthorized('authentication required');
  return user;
}
const ip = (req: Request) => req.ip ?? null;

/**
 * `/api/tokens`: one's own personal API tokens (capability `self`); administrators (`users.manage`)
 * may list and revoke everyone's. These routes need a browser session: a token cannot make tokens.
 */
export function registerTokenRoutes(routes: RouteTable, ctx: AppContext, accounts: AccountService): TokenService {
  const tokens = createTokenService(ctx, accounts.audit);

  routes.get('/api/tokens', { access: 'self', query: TokenListQuery, documentedResponse: { status: 200, schema: z.array(ApiTokenView) } }, (req, res) => {
    const query = req.query as TokenListQuery;
    return tokens.list(signedIn(res), query.user === 'all');
  });

  routes.post('/api/tokens', { access: 'self', body: TokenCreateBody, documentedResponse: { status: 201, schema: CreatedApiTokenView } }, (req, res) => {
    const created = tokens.create(req.body, signedIn(res), ip(req));
    res.locals.audited = true; // token.create is the entry; no generic `request` row beside it
    res.status(201).set('Cache-Control', 'no-store');
    return created;
  });

  routes.delete('/api/tokens/:id', { access: 'self', documentedResponse: { status: 204, description: 'Revoked' } }, (req, res) => {
    tokens.revoke(parseIntegerParam(req.params.id, 'invalid id'), signedIn(res), ip(req));
    res.locals.audited = true; // token.revoke is the entry
    res.status(204).end();
  });

  // "A personal API token never works on /api/agent/*": refused here with the agents' one answer,
  // whatever agent routes exist, before any of them sees it.
  routes.router.use('/api/agent', (req, _res, next) => {
    next(bearerToken(req)?.startsWith(TOKEN_PREFIX) ? invalidToken() : undefined);
  });

  return tokens;
}
