import instances from './0001-instances.sql';
import access from './0002-access.sql';
import jobs from './0003-jobs.sql';
import usage from './0004-usage.sql';
import hosts from './0005-hosts.sql';
import apiTokens from './0006-api-tokens.sql';
import usageRetention from './0007-usage-retention.sql';
import rebindTokens from './0008-rebind-tokens.sql';
import auditChanges from './0009-audit-changes.sql';
import operations from './0010-operations.sql';
import metricsAlerts from './0011-metrics-alerts.sql';
import signin from './0012-signin.sql';
import passwordChangedAt from './0013-password-changed-at.sql';
import guestTemplates from './0014-guest-templates.sql';
import tailnetFacts from './0015-tailnet-facts.sql';
import changeLog from './0016-change-log.sql';
import provisioning from './0017-provisioning.sql';
import deploy from './0018-deploy.sql';
import hostStorage from './0019-host-storage.sql';
import files from './0020-files.sql';
import tagsCollections from './0021-tags-collections.sql';
import scripts from './0022-scripts.sql';
import campaigns from './0023-campaigns.sql';
import agentChannels from './0024-agent-channels.sql';
import fleetHealth from './0025-fleet-health.sql';
import timeTravel from './0026-time-travel.sql';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Every schema change, in order. Never edit a released migration: add the next number.
 * Each feature owns its tables; the numbers only say the order they were introduced.
 */
export const migrations: readonly Migration[] = [
  { version: 1, name: 'instances', sql: instances },
  { version: 2, name: 'access', sql: access },
  { version: 3, name: 'jobs', sql: jobs },
  { version: 4, name: 'usage', sql: usage },
  { version: 5, name: 'hosts', sql: hosts },
  { version: 6, name: 'api-tokens', sql: apiTokens },
  { version: 7, name: 'usage-retention', sql: usageRetention },
  { version: 8, name: 'rebind-tokens', sql: rebindTokens },
  { version: 9, name: 'audit-changes', sql: auditChanges },
  { version: 10, name: 'operations', sql: operations },
  { version: 11, name: 'metrics-alerts', sql: metricsAlerts },
  { version: 12, name: 'signin', sql: signin },
  { version: 13, name: 'password-changed-at', sql: passwordChangedAt },
  { version: 14, name: 'guest-templates', sql: guestTemplates },
  { version: 15, name: 'tailnet-facts', sql: tailnetFacts },
  { version: 16, name: 'change-log', sql: changeLog },
  { version: 17, name: 'provisioning', sql: provisioning },
  { version: 18, name: 'deploy', sql: deploy },
  { version: 19, name: 'host-storage', sql: hostStorage },
  { version: 20, name: 'files', sql: files },
  { version: 21, name: 'tags-collections', sql: tagsCollections },
  { version: 22, name: 'scripts', sql: scripts },
  { version: 23, name: 'campaigns', sql: campaigns },
  { version: 24, name: 'agent-channels', sql: agentChannels },
  { version: 25, name: 'fleet-health', sql: fleetHealth },
  { version: 26, name: 'time-travel', sql: timeTravel },
];
