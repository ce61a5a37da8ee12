/** Where a script runs: on the Proxmox host itself, or inside a guest (`pct exec` / `qm guest exec`). */
export const SCRIPT_TARGETS = ['host', 'guest'] as const;
export type ScriptTarget = (typeof SCRIPT_TARGETS)[number];
/** What reads the body on standard input (`<interpreter> -s`). */
export const SCRIPT_INTERPRETERS = ['bash', 'sh', 'python3'] as const;
export type ScriptInterpreter = (typeof SCRIPT_INTERPRETERS)[number];

/** "body at most 64 KiB of UTF-8", counted in bytes. */
export const SCRIPT_MAX_BYTES = 64 * 1024;
/** "the last 20 versions are kept" */
export const SCRIPT_VERSIONS_KEPT = 20;
/** "timeout_s 1–3600 (default 300)" */
export const SCRIPT_TIMEOUT_DEFAULT_S = 300;
export const SCRIPT_TIMEOUT_MAX_S = 3600;
/** What the agent answers when a script is for the host and the host was installed without `--allow-scripts`. */
export const SCRIPTS_NOT_ALLOWED = 'scripts are not allowed on this host';

/** GET /api/scripts (`content.read`): what viewers see of a script, never its body. */
export interface ScriptSummary {
  id: number;
  name: string;
  description: string;
  runs_on: ScriptTarget;
  interpreter: ScriptInterpreter;
  /** Bytes of the body (UTF-8). */
  size: number;
  /** Hex SHA-256 of the body. */
  sha256: string;
  /** The number of its newest version (1 for a new script). */
  version: number;
  updated_by: string;
  /** ISO 8601 UTC, seconds. */
  updated_at: string;
}

/** GET /api/scripts/:id (`content.manage`) and the answers of its writes: the summary and the body. */
export interface Script extends ScriptSummary {
  body: string;
}

/** GET /api/scripts/:id/versions: the kept versions (the last 20), newest first. */
export interface ScriptVersion {
  version: number;
  size: number;
  sha256: string;
  updated_by: string;
  updated_at: string;
}

/**
 * A script run as the agent reads it (PRODUCT.md): the agent checks `sha256` against `body`, then runs
 * `<interpreter> -s` reading the body on standard input: on the host when `vmid` is absent (only
 * when installed with `--allow-scripts`, else it fails with "scripts are not allowed on this host"
 * and runs nothing), `pct exec <vmid> -- <interpreter> -s` in a container, `qm guest exec <vmid>
 * --pass-stdin 1 --timeout <timeout_s> -- <interpreter> -s` in a VM; within `timeout_s`.
 */
export interface ScriptCommand {
  type: 'script';
  operation_id: string;
  script_id: number;
  sha256: string;
  interpreter: ScriptInterpreter;
  body: string;
  vmid?: number;
  timeout_s: number;
}

/** A kept version as a backup carries it. */
export interface BackupScriptVersion {
  version: number;
  body: string;
  updated_by: string;
  updated_at: string;
}

/** A script as a backup carries it (`scripts` of GET /api/export): with its kept versions, oldest first. */
export interface BackupScript extends Script {
  versions: BackupScriptVersion[];
}
