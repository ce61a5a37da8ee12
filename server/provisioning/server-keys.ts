import { nameOf, type AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { ServerKeyInput } from '../contract/inputs/provisioning.js';
import type { ServerKey, ServerKeyChoice } from '../contract/provisioning.js';
import { badRequest, conflict, notFound, validationFailed } from '../errors.js';
import { isoSeconds } from '../time.js';
import type { ProvisioningRepo, ServerKeyRow } from './repo.js';
import { parsePublicKey, PRIVATE_KEY_ERROR, type PublicKey } from './ssh-key.js';

export const presentKey = (row: ServerKeyRow): ServerKey => ({
  id: row.id,
  name: row.name,
  type: row.type,
  bits: row.bits,
  fingerprint: row.fingerprint,
  comment: row.comment,
  created_by: row.created_by,
  created_at: row.created_at,
});

const subject = (row: { id: number; name: string }) => ({ type: 'server_key', id: String(row.id), name: row.name });

/**
 * Server keys: SSH public keys an administrator saved, which deploy and rebuild put on guests by id.
 * The key line is stored canonical and is never answered, logged or audited; a private key pasted by
 * mistake is refused before anything is kept.
 */
export function createServerKeys(ctx: Pick<AppContext, 'transaction' | 'clock'>, repo: ProvisioningRepo, audit: AuditLog) {
  const insertTx = ctx.transaction((name: string, key: PublicKey): ServerKey => {
    const row = {
      name,
      type: key.type,
      bits: key.bits,
      fingerprint: key.fingerprint,
      comment: key.comment,
      public_key: key.line,
      created_by: nameOf(),
      created_at: isoSeconds(ctx.clock.now()),
    };
    // The fingerprint's UNIQUE index decides between parallel saves of one key, not a look first.
    let id: number;
    try {
      id = repo.insertKey(row);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('server key already saved');
      throw err;
    }
    audit.write({
      action: 'server_key.create',
      subject: subject({ id, name: row.name }),
      summary: `${nameOf()} saved server key “${row.name}” (${row.type}, ${row.fingerprint})`,
      detail: { id, name: row.name, type: row.type, bits: row.bits, fingerprint: row.fingerprint },
    });
    return presentKey({ id, ...row });
  });

  const deleteTx = ctx.transaction((id: number): void => {
    const row = repo.key(id);
    if (!row || !repo.deleteKey(id)) throw notFound('server key not found');
    audit.write({
      action: 'server_key.delete',
      subject: subject(row),
      summary: `${nameOf()} deleted server key “${row.name}” (${row.fingerprint})`,
      detail: { id, name: row.name, fingerprint: row.fingerprint },
    });
  });

  return {
    list: (): ServerKeyChoice[] => repo.keys().map((r) => ({ id: r.id, name: r.name, type: r.type, fingerprint: r.fingerprint })),
    read(id: number): ServerKey {
      const row = repo.key(id);
      if (!row) throw notFound('server key not found');
      return presentKey(row);
    },
    /** For deploy and rebuild: the key with its public key line, or undefined when it was deleted (or never was). */
    get: (id: number): ServerKeyRow | undefined => repo.key(id),
    async create(input: ServerKeyInput): Promise<ServerKey> {
      const parsed = await parsePublicKey(input.public_key);
      if ('private' in parsed) throw badRequest(PRIVATE_KEY_ERROR);
      if ('invalid' in parsed) throw validationFailed([{ field: 'public_key', message: parsed.invalid }]);
      return insertTx(input.name, parsed.key);
    },
    remove: deleteTx,
  };
}

export type ServerKeys = ReturnType<typeof createServerKeys>;
