import path from 'node:path';
import { RestoreError, restoreSnapshot } from './restore.js';

/**
 * `npm run restore -- <snapshot file>`: see restore.ts. DB_PATH as the server reads it; a relative
 * snapshot path is taken from the folder the command was typed in (npm runs scripts from the package root).
 */
function fail(reason: string, code: number): never {
  process.stderr.write(`restore: ${reason}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.length !== 1 || args[0]!.startsWith('-')) fail('usage: npm run restore -- <snapshot file>  (with DB_PATH set as for the server)', 2);
  const snapshot = path.resolve(process.env.INIT_CWD ?? process.cwd(), args[0]!);
  const dbPath = process.env.DB_PATH?.trim() || './data/homefleet.db';
  const result = await restoreSnapshot(snapshot, dbPath, (line) => process.stdout.write(`restore: ${line}\n`));
  const migrated = result.schemaNow > result.schemaFrom ? ` and migrated from schema ${result.schemaFrom} to ${result.schemaNow}` : '';
  process.stdout.write(`restore: restored ${snapshot} into ${result.dbPath}${migrated}\n`);
  if (result.beforeRestore) process.stdout.write(`restore: to undo, run: DB_PATH=${result.dbPath} npm run restore -- ${result.beforeRestore}\n`);
}

main().catch((err: unknown) => {
  if (err instanceof RestoreError) fail(err.message, err.code);
  fail(err instanceof Error ? err.message : String(err), 1);
});
