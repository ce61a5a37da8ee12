import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { TABLE_OWNERS, TEMPORARY_TABLE_READS } from '../server/db/owners.js';

// Each table has one owner (server/db/owners.ts): a folder's SQL names only the tables it owns, and
// anything else it needs of another feature's tables it asks that feature for. The migrations are not
// scanned: they are the schema's history in one global order (a released one is never edited, and one
// may change several features' tables), not code that reads or writes rows. Tests are not scanned
// either: they seed and inspect whatever table they check.

const root = path.resolve(import.meta.dirname, '..');
const owners: Record<string, string> = TABLE_OWNERS;
/** Where a template literal's `${…}` was: a table name there is built at run time. */
const HOLE = '\u0000';
const KEYWORD = /\b(FROM|JOIN|INTO|UPDATE|TABLE)\b/gi;
/** Words that may follow a table name in a FROM list and are not its alias. */
const CLAUSE = /^(WHERE|ORDER|GROUP|LIMIT|JOIN|LEFT|RIGHT|FULL|INNER|OUTER|CROSS|NATURAL|ON|USING|UNION|EXCEPT|INTERSECT|HAVING|WINDOW|RETURNING|SET|VALUES|DEFAULT|SELECT)$/i;

/** The text of every string and template literal of a source file, a template's substitutions as HOLE. */
export function literalsOf(file: string, source: string): { text: string; line: number }[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: { text: string; line: number }[] = [];
  const at = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      if (!ts.isImportDeclaration(node.parent) && !ts.isExportDeclaration(node.parent)) found.push({ text: node.text, line: at(node) });
    } else if (ts.isTemplateExpression(node)) {
      found.push({ text: node.head.text + node.templateSpans.map((span) => HOLE + span.literal.text).join(''), line: at(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** One name at `text[from…]` (optionally `main.` or quoted), and where it ends. */
function nameAt(text: string, from: number): { name: string; end: number } | undefined {
  const m = /^\s*(?:["`[]?\w+["`\]]?\.)?["`[]?(\w+)["`\]]?/.exec(text.slice(from));
  return m ? { name: m[1]!.toLowerCase(), end: from + m[0].length } : undefined;
}

/** The tables an SQL text names after FROM (a comma list too), JOIN, INTO, UPDATE and TABLE; `dynamic` where the name is not in the text. */
export function tablesIn(text: string): { tables: string[]; dynamic: boolean } {
  const tables: string[] = [];
  let dynamic = false;
  for (const m of text.matchAll(KEYWORD)) {
    let from = m.index + m[0].length;
    const rest = text.slice(from);
    // A keyword in capitals followed by `${…}`, or ending the literal (`'… FROM ' + table`): SQL whose table cannot be read here.
    if (m[0] === m[0].toUpperCase() && /^\s*(\u0000|$)/.test(rest)) dynamic = true;
    const modifier = /^\s+(OR\s+\w+|IF\s+(NOT\s+)?EXISTS)\b/i.exec(rest);
    if (modifier) from += modifier[0].length;
    let found = nameAt(text, from);
    while (found) {
      tables.push(found.name);
      if (m[1]!.toUpperCase() !== 'FROM') break;
      // FROM a x, b AS y: every table of the list, past each alias.
      let after = found.end;
      const alias = /^\s+(?:AS\s+)?(\w+)/i.exec(text.slice(after));
      if (alias && !CLAUSE.test(alias[1]!)) after += alias[0].length;
      const comma = /^\s*,/.exec(text.slice(after));
      found = comma ? nameAt(text, after + comma[0].length) : undefined;
    }
  }
  return { tables, dynamic };
}

/** The owner of a path of server/ (`registry/repo.ts` → `registry/`), or the file itself at the top. */
const ownerOf = (file: string) => (file.includes('/') ? `${file.split('/')[0]}/` : file);

/** What a server/ source file's SQL names that it does not own, as lines a reader can act on. */
export function violationsIn(file: string, source: string, allowed: Readonly<Record<string, readonly string[]>> = TEMPORARY_TABLE_READS): string[] {
  const out: string[] = [];
  for (const { text, line } of literalsOf(file, source)) {
    const { tables, dynamic } = tablesIn(text);
    if (dynamic) out.push(`server/${file}:${line}: SQL with a table name built at run time (the ownership check cannot read it)`);
    for (const table of new Set(tables)) {
      const owner = owners[table];
      if (owner === undefined || owner === ownerOf(file) || allowed[file]?.includes(table)) continue;
      out.push(`server/${file}:${line}: names table ${table}, which ${owner} owns`);
    }
  }
  return out;
}

function sourcesOf(dir: string): string[] {
  return fs.readdirSync(path.join(root, 'server', dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sourcesOf(rel);
    return /\.ts$/.test(entry.name) && !/\.(test|d)\.ts$/.test(entry.name) ? [rel] : [];
  });
}

/** The tables the migrations leave: each CREATE TABLE, less each DROP TABLE after it. */
function migratedTables(): string[] {
  const dir = path.join(root, 'server', 'db', 'migrations');
  const tables = new Set<string>();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.sql')).sort()) {
    // A table copied to change what SQLite cannot alter is created under a new name, then renamed.
    for (const m of fs.readFileSync(path.join(dir, file), 'utf8').matchAll(/\b(CREATE|DROP|ALTER)\s+TABLE\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(\w+)(?:\s+RENAME\s+TO\s+(\w+))?/gi)) {
      const verb = m[1]!.toUpperCase();
      if (verb === 'CREATE') tables.add(m[2]!);
      else if (verb === 'DROP') tables.delete(m[2]!);
      else if (m[3]) (tables.delete(m[2]!), tables.add(m[3]));
    }
  }
  return [...tables].sort();
}

describe('each table has one owner (server/db/owners.ts)', () => {
  it('the map names exactly the tables the migrations leave, each owned by a folder or file that exists', () => {
    expect(Object.keys(owners).sort()).toEqual(migratedTables());
    const missing = Object.entries(owners).filter(([, owner]) => !fs.existsSync(path.join(root, 'server', owner)));
    expect(missing, 'owners that are not in server/').toEqual([]);
  });

  it("no server/ source file's SQL names a table another folder owns", () => {
    const files = sourcesOf('');
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((file) => violationsIn(file, fs.readFileSync(path.join(root, 'server', file), 'utf8')));
    // A failure lists each file and line, the table, and who owns it: ask the owner instead.
    expect(found.join('\n'), 'SQL naming another owner’s table').toBe('');
  });

  it('the temporary exceptions still name SQL that exists (an entry outlives its change otherwise)', () => {
    for (const [file, tables] of Object.entries(TEMPORARY_TABLE_READS)) {
      const source = fs.readFileSync(path.join(root, 'server', file), 'utf8');
      const named = literalsOf(file, source).flatMap(({ text }) => tablesIn(text).tables);
      expect(tables.filter((t) => !named.includes(t)), `server/${file} no longer names these: delete the exception`).toEqual([]);
    }
  });

  describe('fails on planted SQL', () => {
    const plant = (file: string, code: string) => violationsIn(file, code, {});

    it('on a read of another feature’s table in a string, a template or a multi-line template', () => {
      expect(plant('backup/service.ts', "db.prepare('SELECT id FROM instances')")).toEqual(['server/backup/service.ts:1: names table instances, which registry/ owns']);
      expect(plant('tokens/repo.ts', 'const q = `SELECT t.*, a.username FROM api_tokens t\n  JOIN accounts a ON a.id = t.account_id`;')).toEqual([
        'server/tokens/repo.ts:1: names table accounts, which access/ owns',
      ]);
      expect(plant('services.ts', 'db.prepare(`SELECT ${cols}\n FROM\n   job_runs WHERE id = ?`)')).toEqual(['server/services.ts:1: names table job_runs, which jobs/ owns']);
    });

    it('on writes: INSERT INTO, INSERT OR REPLACE INTO, UPDATE, UPDATE OR IGNORE, DELETE FROM, in any case', () => {
      const writes = [
        "'INSERT INTO jobs (id) VALUES (?)'",
        "'INSERT OR REPLACE INTO jobs (id) VALUES (?)'",
        "'UPDATE jobs SET enabled = 0'",
        "'UPDATE OR IGNORE jobs SET enabled = 0'",
        "'DELETE FROM jobs'",
        "'delete from jobs'",
        '\'DELETE FROM "jobs"\'',
        "'DELETE FROM main.jobs'",
      ];
      for (const sql of writes) expect(plant('backup/service.ts', `db.exec(${sql})`), sql).toEqual(['server/backup/service.ts:1: names table jobs, which jobs/ owns']);
    });

    it('on every table of a FROM list, past aliases', () => {
      expect(plant('alerts/repo.ts', "'SELECT 1 FROM alerts a, hosts AS h, jobs WHERE a.id = h.id'")).toEqual([
        'server/alerts/repo.ts:1: names table hosts, which hosts/ owns',
        'server/alerts/repo.ts:1: names table jobs, which jobs/ owns',
      ]);
    });

    it('on a table name built at run time', () => {
      expect(plant('usage/repo.ts', 'db.prepare(`SELECT count(*) FROM ${table}`)')).toEqual([
        'server/usage/repo.ts:1: SQL with a table name built at run time (the ownership check cannot read it)',
      ]);
      expect(plant('usage/repo.ts', "db.prepare('DELETE FROM ' + table)")).toHaveLength(1);
    });

    it('not on the owner’s own SQL, a composition root without SQL, prose, comments or imports', () => {
      expect(plant('registry/repo.ts', "'SELECT h.id FROM instance_history h JOIN instances i ON i.id = h.instance_id'")).toEqual([]);
      expect(plant('audit.ts', "'INSERT INTO audit_log (action) VALUES (?)'")).toEqual([]);
      expect(plant('jobs/service.ts', 'const s = `Would update ${n} of ${m} instances`; // SELECT * FROM instances')).toEqual([]);
      expect(plant('backup/restore-cli.ts', "import { x } from 'instances';\nconst s = `restored ${a} into ${b}`;")).toEqual([]);
      expect(plant('access/accounts.ts', "'SELECT 1 FROM sqlite_master WHERE name = ?'")).toEqual([]);
      expect(plant('notifications/message.ts', "'A test from homefleet. Alerts will arrive here.'")).toEqual([]);
    });

    it('and a temporary exception allows only its file and table', () => {
      const allowed = { 'hosts/repo.ts': ['instances'] };
      expect(violationsIn('hosts/repo.ts', "'SELECT 1 FROM host_guests g JOIN instances i ON i.vmid = g.vmid'", allowed)).toEqual([]);
      expect(violationsIn('hosts/repo.ts', "'SELECT 1 FROM jobs'", allowed)).toHaveLength(1);
      expect(violationsIn('hosts/service.ts', "'SELECT 1 FROM instances'", allowed)).toHaveLength(1);
    });
  });
});
