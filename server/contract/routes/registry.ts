import { answer, input, route } from '../route.js';
import type { BackupDocument, ImportAnswer, SnapshotList, SnapshotTaken } from '../backup.js';
import type { Alert, AlertRule } from '../alerts.js';
import type { AlertRuleUpdate, AlertsQuery } from '../inputs/alerts.js';
import type { JobUpdate, RunQuery } from '../inputs/jobs.js';
import type { DryRun, JobDetail, JobView, RunAnswer } from '../jobs.js';
import type { ChannelInput, DeliveriesQuery } from '../inputs/notifications.js';
import type { Channel, Delivery, TestOutcome } from '../notifications.js';
import type { BulkEdit, InstanceAtParams, InstanceInput, InstanceListParams, InstanceUpdate } from '../inputs/registry.js';
import type { BulkEdited, HistoryEntry, Instance, InstanceDetail, ListedInstance, PlacedInstance, StackList } from '../registry.js';

/** The registry, its sync jobs, backup and snapshots, alerts and notifications. */
export const registryRoutes = {
  'GET /api/instances': route({
    query: input<InstanceListParams>(),
    answers: [answer<ListedInstance[]>(200, 'Instances, filtered and sorted; with `at` in the past, those that existed then as they were then (filtered by those values), with `current_vmid`')],
  }),
  'GET /api/instances/stacks': route({ answers: [answer<StackList>(200, 'The stacks in use')] }),
  'GET /api/instances/:vmid': route({
    ids: ['vmid'],
    query: input<InstanceAtParams>(),
    answers: [answer<InstanceDetail>(200, 'The instance, with `deploy`: how homefleet deployed its guest (or null); with `at` in the past, the instance that had this vmid then, as it was then (404 when none had it)')],
  }),
  'GET /api/instances/:vmid/history': route({ ids: ['vmid'], answers: [answer<HistoryEntry[]>(200, "The instance's field changes, newest first")] }),
  'POST /api/instances': route({ body: input<InstanceInput>(), answers: [answer<Instance>(201, 'The instance')] }),
  'POST /api/instances/bulk': route({
    body: input<BulkEdit>(),
    answers: [answer<BulkEdited>(200, 'All or nothing: `updated`, the instances that changed (400 naming the vmid and field of the first that cannot)')],
  }),
  'PUT /api/instances/:vmid': route({ ids: ['vmid'], body: input<InstanceUpdate>(), answers: [answer<PlacedInstance>(200, 'The instance as changed')] }),
  'DELETE /api/instances/:vmid': route({ ids: ['vmid'], answers: [answer(204, 'Deleted')] }),

  'GET /api/jobs': route({ answers: [answer<JobView[]>(200, 'The sync jobs, secrets redacted')] }),
  'GET /api/jobs/:id': route({ ids: ['id'], answers: [answer<JobDetail>(200, 'The job with its recent runs')] }),
  'PUT /api/jobs/:id': route({ ids: ['id'], body: input<JobUpdate>(), answers: [answer<JobView>(200, 'The job as changed')] }),
  'POST /api/jobs/:id/run': route({ ids: ['id'], query: input<RunQuery>(), answers: [answer<RunAnswer | DryRun>(200, 'The run, or with `dry_run=true` the changes it would make')] }),

  'GET /api/export': route({ answers: [answer<BackupDocument>(200, 'The backup document (a download)')] }),
  'POST /api/import': route({ answers: [answer<ImportAnswer>(200, 'What was imported')] }),
  'GET /api/snapshots': route({ answers: [answer<SnapshotList>(200, 'The snapshots and their settings')] }),
  'POST /api/snapshots': route({ answers: [answer<SnapshotTaken>(201, 'The snapshot taken')] }),
  'GET /api/snapshots/:name': route({ answers: [answer(200, 'The snapshot file', 'application/vnd.sqlite3')] }),

  'GET /api/alerts/rules': route({ answers: [answer<AlertRule[]>(200, 'The built-in rules with their settings')] }),
  'PUT /api/alerts/rules/:rule': route({ body: input<AlertRuleUpdate>(), answers: [answer<AlertRule>(200, 'The rule with its new settings')] }),
  'GET /api/alerts': route({ query: input<AlertsQuery>(), answers: [answer<Alert[]>(200, 'Alerts, firing first, then newest first')] }),

  'GET /api/notifications/channels': route({ answers: [answer<Channel[]>(200, 'Channels, secrets as **REDACTED**')] }),
  'POST /api/notifications/channels': route({ body: input<ChannelInput>(), answers: [answer<Channel>(201, 'The channel')] }),
  'PUT /api/notifications/channels/:id': route({ ids: ['id'], body: input<ChannelInput>(), answers: [answer<Channel>(200, 'The channel')] }),
  'DELETE /api/notifications/channels/:id': route({ ids: ['id'], answers: [answer(204, 'Removed')] }),
  'POST /api/notifications/channels/:id/test': route({ ids: ['id'], answers: [answer<TestOutcome>(200, '`{ok, error, delivery_id}`: the outcome of one attempt')] }),
  'GET /api/notifications/deliveries': route({ query: input<DeliveriesQuery>(), answers: [answer<Delivery[]>(200, 'Deliveries, newest first')] }),
} as const;
