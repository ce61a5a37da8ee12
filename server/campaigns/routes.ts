import { roleHas } from '../contract/access.js';
import { CampaignBody, CampaignCreateQuery } from '../contract/inputs/campaigns.js';
import { forbidden } from '../errors.js';
import { userOf } from '../http/locals.js';
import { actorName, currentContext } from '../http/request-context.js';
import type { RouteTable } from '../http/routes.js';
import type { CampaignService } from './service.js';

const who = () => ({ actor: actorName(currentContext().actor) });

/**
 * Campaigns: `fleet.operate` makes and steers them, `fleet.read` reads them. A step asks for what
 * its own route would: a script also `content.manage` (PRODUCT.md), an agent upgrade `hosts.manage`
 * (as POST /api/hosts/:id/upgrade), forcing past maintenance windows an administrator.
 */
export function registerCampaignRoutes(routes: RouteTable, campaigns: CampaignService): void {
  routes.on('POST /api/campaigns', { access: 'fleet.operate', query: CampaignCreateQuery, body: CampaignBody }, (req, res, { query, body }) => {
    const { role } = userOf(res);
    const { step } = body;
    if (step.type === 'script' && !roleHas(role, 'content.manage')) throw forbidden('a script step needs content.manage');
    if (step.type === 'agent.upgrade' && !roleHas(role, 'hosts.manage')) throw forbidden('an agent.upgrade step needs hosts.manage');
    if (step.type === 'guest.action' && step.force === true && !roleHas(role, 'settings.manage')) throw forbidden('only an administrator may force an action');
    if (query.dry_run === 'true') {
      res.status(200);
      return campaigns.plan(body);
    }
    return campaigns.create(body);
  });
  routes.on('GET /api/campaigns', { access: 'fleet.read' }, () => campaigns.list());
  routes.on('GET /api/campaigns/:id', { access: 'fleet.read' }, (req, res, { params }) => {
    res.set('Content-Type', 'application/json; charset=utf-8').send(campaigns.json(params.id));
  });
  routes.on('POST /api/campaigns/:id/pause', { access: 'fleet.operate' }, (req, res, { params }) => campaigns.change(params.id, 'pause', who(), false));
  routes.on('POST /api/campaigns/:id/resume', { access: 'fleet.operate' }, (req, res, { params }) => campaigns.change(params.id, 'resume', who(), false));
  routes.on('POST /api/campaigns/:id/cancel', { access: 'fleet.operate' }, (req, res, { params }) =>
    campaigns.change(params.id, 'cancel', who(), roleHas(userOf(res).role, 'hosts.manage')),
  );
}
