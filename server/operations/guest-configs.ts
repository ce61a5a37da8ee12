import { createHash } from 'node:crypto';
import type { GuestConfigUpload } from '../contract/inputs/operations.js';
import type { GuestConfigVersion } from '../contract/operations.js';
import type { Db } from '../db/database.js';
import { notFound, unprocessable, validationFailed } from '../errors.js';
import { isoMillis } from '../time.js';
import { unifiedDiff } from './config-diff.js';
import { unredactedKeys } from './config-secrets.js';
import { requireHost } from '../hosts/parts.js';
import type { OperationParts } from './parts.js';

/** "The server keeps the last 20 versions per guest." */
export const KEPT_VERSIONS = 20;

interface ConfigRow {
  id: number;
  sha256: string;
  text: string;
  size: number;
  received_at: number;
}

function createGuestConfigRepo(db: Db) {
  const latest = db.prepare<[number, number], ConfigRow>('SELECT * FROM guest_configs WHERE host_id = ? AND vmid = ? ORDER BY id DESC LIMIT 1');
  const insert = db.prepare<[number, number, string, string, number, number]>(
    'INSERT INTO guest_configs (host_id, vmid, sha256, text, size, received_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const prune = db.prepare<[number, number, number, number, number]>(
    `DELETE FROM guest_configs WHERE host_id = ? AND vmid = ? AND id NOT IN (
       SELECT id FROM guest_configs WHERE host_id = ? AND vmid = ? ORDER BY id DESC LIMIT ?)`,
  );
  const list = db.prepare<[number, number], Omit<ConfigRow, 'text'>>(
    'SELECT id, sha256, size, received_at FROM guest_configs WHERE host_id = ? AND vmid = ? ORDER BY id DESC',
  );
  const one = db.prepare<[number, number, number], ConfigRow>('SELECT * FROM guest_configs WHERE host_id = ? AND vmid = ? AND id = ?');
  const before = db.prepare<[number, number, number], ConfigRow>('SELECT * FROM guest_configs WHERE host_id = ? AND vmid = ? AND id < ? ORDER BY id DESC LIMIT 1');
  return {
    latest: (hostId: number, vmid: number) => latest.get(hostId, vmid),
    insert(hostId: number, vmid: number, sha256: string, text: string, now: number): void {
      insert.run(hostId, vmid, sha256, text, Buffer.byteLength(text), now);
      prune.run(hostId, vmid, hostId, vmid, KEPT_VERSIONS);
    },
    list: (hostId: number, vmid: number) => list.all(hostId, vmid),
    one: (hostId: number, vmid: number, id: number) => one.get(hostId, vmid, id),
    before: (hostId: number, vmid: number, id: number) => before.get(hostId, vmid, id),
  };
}

/**
 * Raw guest configs (PRODUCT.md): an agent uploads a guest's config when its hash changes; the last
 * 20 versions per guest are kept and served as text and as unified diffs to operators.
 */
export function createGuestConfigs(parts: OperationParts) {
  const { ctx, repo } = parts;
  const configs = createGuestConfigRepo(ctx.db);

  const uploadTx = ctx.transaction((hostId: number, body: GuestConfigUpload, now: number): boolean => {
    if (!repo.guestOf(hostId, body.vmid)) throw notFound('guest not found');
    if (configs.latest(hostId, body.vmid)?.sha256 === body.sha256) return false;
    configs.insert(hostId, body.vmid, body.sha256, body.text, now);
    return true;
  });

  function version(hostId: number, vmid: number, id: number): ConfigRow {
    requireHost(repo, hostId);
    const row = configs.one(hostId, vmid, id);
    if (!row) throw notFound('config not found');
    return row;
  }

  return {
    /** Stores a new version; false when it is the one already stored. */
    upload(hostId: number, body: GuestConfigUpload): boolean {
      if (createHash('sha256').update(body.text, 'utf8').digest('hex') !== body.sha256) {
        throw validationFailed([{ field: 'sha256', message: 'does not match the text' }]);
      }
      const keys = unredactedKeys(body.text);
      if (keys.length) throw validationFailed([{ field: 'text', message: `holds secrets the agent must redact: ${[...new Set(keys)].join(', ')}` }]);
      return uploadTx(hostId, body, ctx.clock.now());
    },

    list(hostId: number, vmid: number): GuestConfigVersion[] {
      requireHost(repo, hostId);
      return configs.list(hostId, vmid).map((row) => ({ id: row.id, sha256: row.sha256, received_at: isoMillis(row.received_at), size: row.size }));
    },

    text: (hostId: number, vmid: number, id: number): string => version(hostId, vmid, id).text,

    /**
     * A unified diff from `against` (the version before this one when absent; none: from nothing) to
     * version `id`, each file named by when it was received; 422 when the two differ too much to show.
     */
    async diff(hostId: number, vmid: number, id: number, against: number | undefined): Promise<string> {
      const to = version(hostId, vmid, id);
      const from = against === undefined ? configs.before(hostId, vmid, id) : version(hostId, vmid, against);
      const side = (row: ConfigRow | undefined, prefix: 'a' | 'b') =>
        row ? { label: `${prefix}/${vmid}.conf (received ${isoMillis(row.received_at)})`, text: row.text } : { label: '/dev/null', text: '' };
      const diff = await unifiedDiff(side(from, 'a'), side(to, 'b'));
      if (diff === undefined) throw unprocessable('the versions differ too much to show a diff');
      return diff;
    },
  };
}
