import fs from 'node:fs';
import { createInterface } from 'node:readline';
import { createAuditLog } from '../audit.js';
import { createDataContext } from '../context.js';
import { openDatabase } from '../db/database.js';
import { systemClock } from '../time.js';
import type { Db } from '../db/database.js';
import { createAccountService, type AccountOptions } from './accounts.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../contract/inputs/access.js';

/**
 * `npm run recover -- <username>`: sets a new password for an enabled administrator of the database
 * at DB_PATH, ends their sessions and records the recovery. The password is read from the terminal
 * without echo, or as two lines of standard input when that is not a terminal; never from arguments.
 */

function fail(reason: string, code = 1): never {
  process.stderr.write(`recover: ${reason}\n`);
  process.exit(code);
}

/** Reads one line from a terminal with echo off (raw mode), so the password never shows. */
function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    let line = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') {
          stdin.off('data', onData);
          stdin.setRawMode(false);
          stdin.pause();
          process.stderr.write('\n');
          return resolve(line);
        }
        if (ch === '\u0003') {
          stdin.setRawMode(false);
          process.stderr.write('\n');
          fail('cancelled', 130);
        }
        if (ch === '\u007f' || ch === '\b') line = line.slice(0, -1);
        else line += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The first two lines of a piped standard input (a trailing \r of CRLF input is dropped). */
async function readTwoLines(): Promise<[string, string]> {
  const lines: string[] = [];
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  for await (const line of rl) {
    lines.push(line.replace(/\r$/, ''));
    if (lines.length === 2) break;
  }
  rl.close();
  if (lines.length < 2) fail('expected the new password twice on standard input (two lines)');
  return [lines[0]!, lines[1]!];
}

/** The command; its root (server/recover.ts) hands in what other features add to the account rules. */
export async function recoverCommand(hooks: (db: Db) => AccountOptions): Promise<void> {
  const args = process.argv.slice(2);
  if (args.length !== 1 || args[0]!.startsWith('-')) fail('usage: npm run recover -- <username>  (the password is prompted for, never an argument)', 2);
  const username = args[0]!;
  const dbPath = process.env.DB_PATH?.trim() || './data/homefleet.db';
  if (dbPath === ':memory:' || !fs.existsSync(dbPath)) fail(`no database at ${dbPath}; set DB_PATH to the server's database file`);

  const db = openDatabase(dbPath);
  try {
    const data = { ...createDataContext(db), clock: systemClock };
    const accounts = createAccountService(data, createAuditLog(data), hooks(db));
    const row = accounts.repo.byUsername(username);
    // Checked before asking for a password, and again (with the same rules) when it is set.
    if (!row) fail(`no account named ${JSON.stringify(username)}`);
    if (row.role !== 'administrator') fail(`${row.username} is not an administrator; only an enabled administrator can be recovered`);
    if (!row.enabled) fail(`${row.username} is disabled; only an enabled administrator can be recovered`);

    const [first, second] = process.stdin.isTTY
      ? [await promptHidden('New password: '), await promptHidden('Repeat the new password: ')]
      : await readTwoLines();
    if (first !== second) fail('the two passwords differ');
    if (first.length < PASSWORD_MIN || first.length > PASSWORD_MAX) fail(`the password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);

    const outcome = await accounts.recover(username, first);
    if (typeof outcome === 'string') fail(outcome);
    const cleared = outcome.cleared ? `; their second factors (${outcome.cleared}) are removed` : '';
    process.stdout.write(`recover: new password set for ${row.username}; their sessions are ended${cleared}\n`);
  } finally {
    db.close();
  }
}

export const recoverFailed = (err: unknown) => fail(err instanceof Error ? err.message : String(err));
