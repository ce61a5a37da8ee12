import { createHash } from 'node:crypto';
import type { BackupScript } from '../contract/scripts.js';
import { BackupScriptRow } from '../contract/inputs/scripts.js';
import type { Db } from '../db/database.js';
import { validationFailed } from '../errors.js';
import { bodyProblem } from './service.js';
import { createScriptRepo } from './repo.js';

const facts = (body: string) => {
  const bytes = Buffer.from(body, 'utf8');
  return { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
};

export type ScriptsBackup = ReturnType<typeof createScriptsBackup>;

/**
 * The scripts and their kept versions as a backup carries them (server/backup asks for them through
 * server/services.ts). A document without `scripts` leaves them as they are; one with it replaces
 * them all, each keeping its id (campaigns name scripts by id).
 */
export function createScriptsBackup(db: Db) {
  const repo = createScriptRepo(db);

  return {
    exportScripts(): BackupScript[] {
      const versions = new Map<number, BackupScript['versions']>();
      for (const { script_id, version, body, updated_by, updated_at } of repo.allVersions()) {
        const list = versions.get(script_id) ?? [];
        list.push({ version, body, updated_by, updated_at });
        versions.set(script_id, list);
      }
      return repo.all().map((row) => ({ ...row, versions: versions.get(row.id) ?? [] }));
    },

    /** Checks the section; throws the 400 naming the first bad script (`scripts[2].body`). Writes nothing. */
    parse(raw: unknown): BackupScriptRow[] {
      if (!Array.isArray(raw)) throw validationFailed([{ field: 'scripts', message: 'must be an array' }]);
      const ids = new Set<number>();
      const names = new Set<string>();
      return raw.map((row, i) => {
        const at = (field: string, message: string) => validationFailed([{ field: `scripts[${i}]${field ? `.${field}` : ''}`, message: `scripts[${i}]: ${field ? `${field} ` : ''}${message}` }]);
        const parsed = BackupScriptRow.safeParse(row);
        if (!parsed.success) {
          const issue = parsed.error.issues[0]!;
          throw at(issue.path.join('.'), issue.message);
        }
        const script = parsed.data;
        for (const [j, body] of [script.body, ...script.versions.map((v) => v.body)].entries()) {
          const problem = bodyProblem(body);
          if (problem) throw at(j === 0 ? 'body' : `versions[${j - 1}].body`, problem);
        }
        if (ids.has(script.id)) throw at('id', `duplicates another script's id ${script.id}`);
        if (names.has(script.name.toLowerCase())) throw at('name', `duplicates another script's name “${script.name}”`);
        const numbers = script.versions.map((v) => v.version);
        if (new Set(numbers).size !== numbers.length || numbers.some((n) => n > script.version)) {
          throw at('versions', `must be distinct versions, none after the script's version ${script.version}`);
        }
        ids.add(script.id);
        names.add(script.name.toLowerCase());
        return script;
      });
    },

    /** Replaces every script and version; only inside the importer's transaction, which holds its audit entry too. */
    importRows(scripts: readonly BackupScriptRow[]): void {
      if (!db.inTransaction) throw new Error('scripts importRows runs only inside the import’s transaction');
      repo.deleteAll();
      for (const { versions, id, ...script } of scripts) {
        repo.insertWithId(id, { ...script, ...facts(script.body) });
        for (const v of [...versions].sort((a, b) => a.version - b.version)) repo.addVersion(id, { ...v, ...facts(v.body) });
      }
    },
  };
}
