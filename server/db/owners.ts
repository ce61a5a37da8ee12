/**
 * Which part of server/ owns each table: only its files hold SQL that names the table, and any other
 * part asks it, through what the composition root hands over (STYLE.md "A table has one owner").
 * An owner is a folder (`registry/`) or a file (`audit.ts`) of server/. `build/tables.test.ts` checks
 * every non-test source file against this map, and that it names exactly the tables the migrations
 * leave. A new migration's table gets its line here.
 */
export const TABLE_OWNERS = {
  instances: 'registry/',
  instance_history: 'registry/',
  tailnet_facts: 'registry/',
  instance_deploys: 'registry/',
  deleted_instances: 'registry/',
  deleted_instance_history: 'registry/',
  accounts: 'access/',
  sessions: 'access/',
  throttle: 'access/',
  audit_log: 'audit.ts',
  telemetry_events: 'telemetry/',
  jobs: 'jobs/',
  job_runs: 'jobs/',
  usage_reports: 'usage/',
  enrollment_tokens: 'hosts/',
  hosts: 'hosts/',
  host_tokens: 'hosts/',
  host_guests: 'hosts/',
  host_storages: 'hosts/',
  operations: 'operations/',
  guest_configs: 'operations/',
  host_maintenance: 'operations/',
  api_tokens: 'tokens/',
  metric_buckets: 'metrics/',
  metric_chunks: 'metrics/',
  metric_rollups: 'metrics/',
  alert_rules: 'alerts/',
  alerts: 'alerts/',
  alert_conditions: 'alerts/',
  notification_channels: 'notifications/',
  notification_deliveries: 'notifications/',
  oidc_identities: 'signin/',
  totp_factors: 'signin/',
  recovery_codes: 'signin/',
  passkeys: 'signin/',
  server_keys: 'provisioning/',
  cloud_configs: 'provisioning/',
  files: 'files/',
  scripts: 'scripts/',
  script_versions: 'scripts/',
  campaigns: 'campaigns/',
  campaign_targets: 'campaigns/',
  collections: 'collections/',
  fleet_backup_jobs: 'fleet/',
  fleet_backups: 'fleet/',
  fleet_backup_reports: 'fleet/',
  fleet_policies: 'fleet/',
} as const satisfies Record<string, string>;

export type Table = keyof typeof TABLE_OWNERS;

/**
 * SQL that names another owner's table in code another change is still rewriting, allowed by file
 * and table until it lands (`'hosts/repo.ts': ['instances']`, with a comment saying which change):
 * delete the entry then, and the check fails again if the SQL is still there.
 */
export const TEMPORARY_TABLE_READS: Readonly<Record<string, readonly Table[]>> = {};
