/** A saved server key (an SSH public key) as administrators read it: never the key text. */
export interface ServerKey {
  id: number;
  name: string;
  /** The OpenSSH type: ssh-ed25519, ecdsa-sha2-nistp256|384|521, ssh-rsa, sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com. */
  type: string;
  bits: number;
  /** `SHA256:<base64, no padding>`, as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** The comment of the key line ("" when it had none). */
  comment: string;
  /** The username of the administrator who saved it. */
  created_by: string;
  /** ISO 8601 UTC, seconds. */
  created_at: string;
}

/** GET /api/server-keys: what an operator needs to pick keys to launch with. */
export type ServerKeyChoice = Pick<ServerKey, 'id' | 'name' | 'type' | 'fingerprint'>;

/** A cloud config (cloud-init user-data) as `GET /api/cloud-configs` lists it: without its body. */
export interface CloudConfigSummary {
  id: number;
  name: string;
  description: string;
  /** Bytes of the body (UTF-8). */
  size: number;
  /** Hex SHA-256 of the body. */
  sha256: string;
  updated_by: string;
  /** ISO 8601 UTC, seconds. */
  updated_at: string;
}

/** `GET /api/cloud-configs/:id` and the answers of its writes: the summary and the body. */
export interface CloudConfig extends CloudConfigSummary {
  body: string;
}

/**
 * How a guest was deployed, kept with its registry instance for rebuilds (`GET /api/instances/:vmid`
 * → `deploy`; not in the backup document): the deploy's fields as the server read them (a
 * `source_vmid` or a `source_volume`, and `source_type`, what the source was), and who deployed it
 * when. Keys and the cloud config are named by id, never by their text.
 */
export interface DeploySpec {
  host_id: number;
  source_type: 'qemu' | 'lxc' | 'volume';
  source_vmid: number | null;
  source_volume: string | null;
  name: string;
  full: boolean;
  storage: string | null;
  cores: number | null;
  memory_mb: number | null;
  disk_gb: number | null;
  network: { bridge: string; vlan?: number; ip: string; gateway?: string } | null;
  ci_user: string | null;
  server_key_ids: number[];
  /** The keys' names when they were launched with (a deleted key is still named by its name). */
  server_key_names: string[];
  cloud_config_id: number | null;
  cloud_config_name: string | null;
  snippets_storage: string | null;
  start: boolean;
  /** ISO 8601 UTC, seconds: when the deploy (or the last rebuild) was asked for. */
  deployed_at: string;
  /** Who asked for it. */
  deployed_by: string;
}

/** A deploy spec as kept and as a deploy operation's `params` hold it: without who deployed it when. */
export type DeployFields = Omit<DeploySpec, 'deployed_at' | 'deployed_by'>;
