import * as z from 'zod';
import { shared } from './parts.js';

/** PRODUCT.md "Host storage, downloads and the file cache". */
export const STORAGE_CONTENTS = ['iso', 'vztmpl', 'images', 'rootdir', 'snippets', 'backup', 'import'] as const;
/** The contents whose volumes the agent lists (`POST /api/agent/storage`). */
export const LISTED_CONTENTS = ['iso', 'vztmpl', 'snippets', 'import'] as const;
export const DOWNLOAD_CONTENTS = ['iso', 'vztmpl', 'import'] as const;
export const PUSH_CONTENTS = ['iso', 'vztmpl', 'snippets', 'import'] as const;
export const CHECKSUM_ALGORITHMS = ['sha256', 'sha512'] as const;
/** A Proxmox storage id. */
export const STORAGE_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
/** A file name on a storage: no path, no leading dot. */
export const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
/** A Proxmox volume id: `<storage>:<content>/<name>` (or `<storage>:<vmid>/<name>` for images). */
export const VOLID = /^[A-Za-z][A-Za-z0-9_.-]{0,63}:[A-Za-z0-9][A-Za-z0-9._+/-]{0,300}$/;

const bytes = () => z.int({ error: 'must be a whole number of bytes' }).min(0, { error: 'must be a whole number of bytes' }).max(Number.MAX_SAFE_INTEGER);
const storageName = shared(() => z.string({ error: 'must be a storage id' }).regex(STORAGE_NAME, { error: 'must be a storage id: a letter, then letters, digits, _ . - (at most 64)' }));

/**
 * A heartbeat's `storages` (the node's storages as `pvesh get /nodes/<node>/storage` lists them:
 * `content` a comma-joined list there, a list here; `active`/`shared` 0 or 1 there) and
 * `storage_sha256`, the hash of the volumes the agent last sent (like `config_sha256`).
 */
export const StorageReport = z.lazy(() =>
  z.object(
    {
      storage: storageName(),
      type: z.string({ error: 'must be a storage type' }).regex(/^[a-z][a-z0-9]{0,31}$/, { error: 'must be a storage type such as dir or lvmthin' }),
      content: z.array(z.string().regex(/^[a-z]{1,16}$/, { error: 'must be a content type such as iso' }), { error: 'must be a list of content types' }).max(16),
      avail: bytes().nullable().optional().transform((v) => v ?? null),
      total: bytes().nullable().optional().transform((v) => v ?? null),
      active: z.boolean({ error: 'must be true or false' }),
      shared: z.boolean({ error: 'must be true or false' }),
    },
    { error: 'must be an object' },
  ),
);
export type StorageReport = z.output<typeof StorageReport>;

/** The heartbeat's storage fields: at most 100 storages. */
export const heartbeatStorageFields = () => ({
  storages: z.array(StorageReport, { error: 'must be a list of storages' }).max(100, { error: 'must hold at most 100 storages' }).optional(),
  storage_sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be a SHA-256 in hex' }).nullable().optional(),
});

/** POST /api/agent/storage (host token): one storage's volumes of the listed contents, at most 10 000. */
export const StorageVolumesBody = z.lazy(() =>
  z.object(
    {
      storage: storageName(),
      volumes: z
        .array(
          z.object(
            {
              volid: z.string({ error: 'must be a volume id' }).regex(VOLID, { error: 'must be a volume id such as local:iso/debian.iso' }),
              format: z.string({ error: 'must be a format' }).regex(/^[a-z0-9.]{1,32}$/, { error: 'must be a format such as iso or raw' }),
              size: bytes(),
              ctime: z.int({ error: 'must be a Unix time' }).min(0).max(2 ** 40).nullable().optional().transform((v) => v ?? null),
            },
            { error: 'must be an object {volid, format, size, ctime}' },
          ),
          { error: 'must be a list of volumes' },
        )
        .max(10_000, { error: 'must hold at most 10000 volumes' }),
    },
    { error: 'must be a JSON object' },
  ),
);
export type StorageVolumesUpload = z.output<typeof StorageVolumesBody>;

/** POST /api/hosts/:id/storage/:storage/downloads */
export const DownloadBody = z.lazy(() =>
  z
    .object(
      {
        url: z
          .string({ error: 'must be an http or https URL' })
          .max(2048, { error: 'must be at most 2048 characters' })
          .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol) && !/[\s\u0000-\u001f]/.test(v), { error: 'must be an http or https URL', abort: true })
          // A user name or password in the URL would be kept in the operation, the change log and the command: refused, never stored.
          .refine((v) => new URL(v).username === '' && new URL(v).password === '', { error: 'must not carry a user name or password (user:password@): use a URL that needs none' }),
        filename: z.string({ error: 'must be a file name' }).regex(FILE_NAME, { error: 'must be a file name without a path: letters, digits, . _ - (at most 255)' }),
        content: z.enum(DOWNLOAD_CONTENTS, { error: `must be one of ${DOWNLOAD_CONTENTS.join(', ')}` }),
        checksum: z.string({ error: 'must be a hex checksum' }).regex(/^[0-9a-fA-F]{64}([0-9a-fA-F]{64})?$/, { error: 'must be a SHA-256 or SHA-512 in hex' }).optional(),
        checksum_algorithm: z.enum(CHECKSUM_ALGORITHMS, { error: `must be one of ${CHECKSUM_ALGORITHMS.join(', ')}` }).optional(),
      },
      { error: 'must be a JSON object' },
    )
    .refine((b) => (b.checksum === undefined) === (b.checksum_algorithm === undefined), { error: 'checksum and checksum_algorithm go together', path: ['checksum_algorithm'] })
    .refine((b) => b.checksum === undefined || b.checksum.length === (b.checksum_algorithm === 'sha512' ? 128 : 64), { error: 'does not have the length of its algorithm', path: ['checksum'] }),
);
export type DownloadInput = z.input<typeof DownloadBody>;
export type DownloadRequest = z.output<typeof DownloadBody>;

/** POST /api/hosts/:id/storage/:storage/files: push a cached file onto the host's storage. */
export const PushBody = z.lazy(() =>
  z.object(
    {
      file_id: z.int({ error: 'must be a file id' }).positive({ error: 'must be a file id' }),
      content: z.enum(PUSH_CONTENTS, { error: `must be one of ${PUSH_CONTENTS.join(', ')}` }),
      replace: z.boolean({ error: 'must be true or false' }).default(false),
    },
    { error: 'must be a JSON object' },
  ),
);
export type PushInput = z.input<typeof PushBody>;
export type PushRequest = z.output<typeof PushBody>;
