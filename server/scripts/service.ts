import { createHash } from 'node:crypto';
import { nameOf, type AuditChange, type AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { ScriptInput } from '../contract/inputs/scripts.js';
import { SCRIPT_MAX_BYTES, type Script, type ScriptSummary, type ScriptVersion } from '../contract/scripts.js';
import { conflict, notFound, unprocessable, validationFailed } from '../errors.js';
import { isoSeconds } from '../time.js';
import { createScriptRepo, type ScriptRow, type ScriptValues, type VersionRow } from './repo.js';

/** A unified diff of two texts, or undefined when they differ too much to show (handed in: server/operations/config-diff.ts). */
export type UnifiedDiff = (from: { label: string; text: string }, to: { label: string; text: string }) => Promise<string | undefined>;

const NAME_TAKEN = 'a script of that name already exists';
const NOT_FOUND = 'script not found';

const summary = ({ body: _body, ...row }: ScriptRow): ScriptSummary => row;
const subject = (row: { id: number; name: string }) => ({ type: 'script', id: String(row.id), name: row.name });

/** Field by field for the change log; the body only by its size, hash and version, never its text. */
function changesOf(before: Partial<ScriptValues>, after: ScriptValues): AuditChange[] {
  return (['name', 'description', 'runs_on', 'interpreter', 'size', 'sha256', 'version'] as const)
    .filter((f) => before[f] !== after[f])
    .map((f) => ({ field: f, before: before[f] ?? null, after: after[f] }));
}

/** A UTF-16 surrogate without its pair: JSON can carry one (`"\ud800"`), UTF-8 cannot. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What is wrong with a body, if anything: "at most 64 KiB of UTF-8" counted in bytes; a lone surrogate has no UTF-8 and a NUL no place in a script. */
export function bodyProblem(body: string): string | undefined {
  const size = Buffer.byteLength(body, 'utf8');
  if (size > SCRIPT_MAX_BYTES) return `must be at most 64 KiB (${SCRIPT_MAX_BYTES} bytes) of UTF-8; this one is ${size} bytes`;
  if (LONE_SURROGATE.test(body)) return 'must be UTF-8 text (it holds a lone surrogate)';
  if (body.includes('\0')) return 'must not contain NUL characters';
  if (body.trim() === '') return 'must not be empty';
  return undefined;
}

function checkedBody(body: string): { size: number; sha256: string } {
  const problem = bodyProblem(body);
  if (problem) throw validationFailed([{ field: 'body', message: problem }]);
  const bytes = Buffer.from(body, 'utf8');
  return { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/**
 * Scripts (PRODUCT.md "Collections, scripts, campaigns and release channels"): names unique whatever
 * their case; every new body is a new version, the last 20 kept for diffs. A script runs only in a
 * campaign, as an operation of type `script` (server/operations/scripts.ts), which reads it by id
 * through `get` when its command is handed out.
 */
export function createScripts(ctx: Pick<AppContext, 'db' | 'transaction' | 'clock'>, audit: AuditLog, diff: UnifiedDiff) {
  const repo = createScriptRepo(ctx.db);

  /** The name's UNIQUE index decides between parallel writes. */
  function unique<T>(write: () => T): T {
    try {
      return write();
    } catch (err) {
      if ((err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict(NAME_TAKEN);
      throw err;
    }
  }

  function required(id: number): ScriptRow {
    const row = repo.one(id);
    if (!row) throw notFound(NOT_FOUND);
    return row;
  }

  const values = (input: ScriptInput, checked: { size: number; sha256: string }, version: number): ScriptValues => ({
    name: input.name,
    description: input.description,
    runs_on: input.runs_on,
    interpreter: input.interpreter,
    body: input.body,
    ...checked,
    version,
    updated_by: nameOf(),
    updated_at: isoSeconds(ctx.clock.now()),
  });

  const createTx = ctx.transaction((input: ScriptInput, checked: { size: number; sha256: string }): Script => {
    const value = values(input, checked, 1);
    const id = unique(() => repo.insert(value));
    repo.addVersion(id, value);
    audit.write({ action: 'script.create', subject: subject({ id, name: value.name }), summary: `${nameOf()} added script “${value.name}”`, changes: changesOf({}, value) });
    return { id, ...value };
  });

  const updateTx = ctx.transaction((id: number, input: ScriptInput, checked: { size: number; sha256: string }): Script => {
    const before = required(id);
    // A new version only when the body changed: a rename is not one.
    const newBody = checked.sha256 !== before.sha256;
    const value = values(input, checked, newBody ? before.version + 1 : before.version);
    unique(() => repo.update(id, value));
    if (newBody) repo.addVersion(id, value);
    audit.write({ action: 'script.update', subject: subject({ id, name: value.name }), summary: `${nameOf()} changed script “${value.name}”`, changes: changesOf(before, value) });
    return { id, ...value };
  });

  const deleteTx = ctx.transaction((id: number): void => {
    const row = required(id);
    repo.delete(id);
    audit.write({ action: 'script.delete', subject: subject(row), summary: `${nameOf()} deleted script “${row.name}”`, detail: { sha256: row.sha256, size: row.size } });
  });

  function version(id: number, v: number): VersionRow {
    const row = repo.version(required(id).id, v);
    if (!row) throw notFound('version not found: the last 20 are kept');
    return row;
  }

  return {
    repo,
    list: (): ScriptSummary[] => repo.list(),
    read: (id: number): Script => required(id),
    /** For a script operation: the script as it is now, or undefined once deleted. */
    get: (id: number): Script | undefined => repo.one(id),
    create: (input: ScriptInput): Script => createTx(input, checkedBody(input.body)),
    update: (id: number, input: ScriptInput): Script => updateTx(id, input, checkedBody(input.body)),
    remove: deleteTx,
    versions: (id: number): ScriptVersion[] => repo.versions(required(id).id),
    versionBody: (id: number, v: number): string => version(id, v).body,

    /**
     * A unified diff from `against` (the kept version before `v` when absent; none: from nothing) to
     * version `v`; 422 when the two differ too much to show (the diff is bounded: server/operations/config-diff.ts).
     */
    async diff(id: number, v: number, against: number | undefined): Promise<string> {
      const script = required(id);
      const to = version(id, v);
      const from = against === undefined ? repo.before(id, v) : version(id, against);
      const side = (row: VersionRow | undefined, prefix: 'a' | 'b') =>
        row ? { label: `${prefix}/${script.name} (version ${row.version})`, text: row.body } : { label: '/dev/null', text: '' };
      const text = await diff(side(from, 'a'), side(to, 'b'));
      if (text === undefined) throw unprocessable('the versions differ too much to show a diff');
      return text;
    },
  };
}

export type Scripts = ReturnType<typeof createScripts>;
