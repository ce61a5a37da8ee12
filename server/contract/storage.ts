import type { StorageReport } from './inputs/storage.js';

/** A volume of a storage as its agent last listed it (`pvesh get /nodes/<node>/storage/<s>/content`). */
export interface StorageVolume {
  volid: string;
  format: string;
  size: number;
  /** Unix seconds, or null when Proxmox did not say. */
  ctime: number | null;
}

/** GET /api/hosts/:id/storage: each storage of the host's last heartbeat, with the volumes its agent last sent. */
export interface HostStorage extends StorageReport {
  volumes: StorageVolume[];
  /** ISO 8601 UTC: when the volumes were last sent, null when never. */
  volumes_at: string | null;
}

/** A file in the cache (POST /api/files, GET /api/files). */
export interface CachedFile {
  id: number;
  /** The uploaded file's name (a file name without a path). */
  name: string;
  size: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
  uploaded_by: string;
  /** ISO 8601 UTC, seconds. */
  uploaded_at: string;
  /** ISO 8601 UTC, seconds: the last upload or push that used it (the cache evicts the least recently used). */
  used_at: string;
}

/** GET /api/files: the cache and its numbers (Settings → Files). */
export interface FileCache {
  files: CachedFile[];
  /** Bytes the cached files take. */
  used_bytes: number;
  /** FLEET_FILE_CACHE_MAX_BYTES. */
  cap_bytes: number;
  /** FLEET_UPLOAD_MAX_BYTES. */
  max_upload_bytes: number;
}
