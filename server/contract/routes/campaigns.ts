import { answer, input, route } from '../route.js';
import type { Campaign, CampaignPlan, CampaignSummary } from '../campaigns.js';
import type { CampaignCreateQuery, CampaignRequest } from '../inputs/campaigns.js';

/** Campaigns: one step over many guests or hosts, in waves (PRODUCT.md "Collections, scripts, campaigns and release channels"). */
export const campaignRoutes = {
  'POST /api/campaigns': route({
    query: input<CampaignCreateQuery>(),
    body: input<CampaignRequest>(),
    answers: [
      answer<Campaign>(201, 'The campaign, running, with its frozen targets (the first wave queued); 409 when every target is skipped'),
      answer<CampaignPlan>(200, 'With `?dry_run=true`: the waves and the skipped targets with their reasons; nothing is queued'),
    ],
  }),
  'GET /api/campaigns': route({ answers: [answer<CampaignSummary[]>(200, 'Campaigns, newest first')] }),
  'GET /api/campaigns/:id': route({ ids: ['id'], answers: [answer<Campaign>(200, 'The campaign with each target’s wave, status, reason and operation id')] }),
  'POST /api/campaigns/:id/pause': route({ ids: ['id'], answers: [answer<Campaign>(200, 'Paused: no new wave or waiting target starts; operations already queued go on')] }),
  'POST /api/campaigns/:id/resume': route({ ids: ['id'], answers: [answer<Campaign>(200, 'Running again')] }),
  'POST /api/campaigns/:id/cancel': route({
    ids: ['id'],
    answers: [answer<Campaign>(200, 'Cancelled: its pending operations are cancelled, operations already sent to agents finish, the other targets are cancelled')],
  }),
} as const;
