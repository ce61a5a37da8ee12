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
