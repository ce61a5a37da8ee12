import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, messageOf, pathOf } from '../api';
import { Confirm, Field, Notice, PageTitle, Time, useLoad } from '../components/ui';
import { navigate } from '../router';
import { useSession } from '../session';
import { fetchText, UnifiedDiff } from '../components/UnifiedDiff';
import type { Script, ScriptInterpreter, ScriptSummary, ScriptTarget, ScriptVersion } from '../../server/contract/scripts';

const TARGET_WORDS: Record<ScriptTarget, string> = { host: 'the host', guest: 'guests' };
const NEW_BODY = '#!/bin/bash\nset -eu\n';

/** Scripts (viewers see summaries; content.manage opens, edits and deletes them). */
export function ScriptsPage() {
  const session = useSession();
  const manages = session.can('content.manage');
  const scripts = useLoad(() => api('GET /api/scripts'), []);
  const [removing, setRemoving] = useState<number>();
  const [outcome, setOutcome] = useState<{ kind: 'success' | 'error'; text: string }>();

  async function remove(s: ScriptSummary) {
    setRemoving(undefined);
    try {
      await api('DELETE /api/scripts/:id', { params: { id: s.id } });
      setOutcome({ kind: 'success', text: `Script “${s.name}” deleted, with its versions.` });
    } catch (e) {
      setOutcome({ kind: 'error', text: messageOf(e) });
    }
    scripts.reload();
  }

  return (
    <>
      <PageTitle title="Scripts">
        {manages && (
          <a class="button primary" href="/scripts/new">
            New script
          </a>
        )}
      </PageTitle>
      <p class="muted">Scripts run only in campaigns: on a host installed with --allow-scripts, or inside guests (pct exec, qm guest exec).</p>
      {outcome && <Notice kind={outcome.kind}>{outcome.text}</Notice>}
      {scripts.error && <Notice kind="error">{scripts.error}</Notice>}
      {scripts.data && scripts.data.length === 0 && <p class="muted">No script yet.</p>}
      {scripts.data && scripts.data.length > 0 && (
        <div class="table-wrap">
          <table class="stack" data-testid="scripts">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Runs on</th>
                <th scope="col">Interpreter</th>
                <th scope="col">Size</th>
                <th scope="col">Version</th>
                <th scope="col">Changed</th>
                {manages && <th scope="col" />}
              </tr>
            </thead>
            <tbody>
              {scripts.data.map((s) => (
                <tr key={s.id} data-script={s.name}>
                  <td data-label="Name">{manages ? <a href={`/scripts/${s.id}`}>{s.name}</a> : s.name}</td>
                  <td data-label="Description">{s.description || '—'}</td>
                  <td data-label="Runs on">{TARGET_WORDS[s.runs_on]}</td>
                  <td data-label="Interpreter">{s.interpreter}</td>
                  <td data-label="Size">{s.size.toLocaleString('en')} bytes</td>
                  <td data-label="Version">{s.version}</td>
                  <td data-label="Changed">
                    {s.updated_by}, <Time iso={s.updated_at} />
                  </td>
                  {manages && (
                    <td class="actions">
                      {removing === s.id ? (
                        <Confirm question={`Delete the script “${s.name}” and its versions?`} action={`Delete “${s.name}”`} label={`Delete ${s.name}`} onConfirm={() => void remove(s)} onCancel={() => setRemoving(undefined)} />
                      ) : (
                        <button type="button" class="danger" onClick={() => setRemoving(s.id)}>
                          Delete
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** /scripts/new and /scripts/:id: the editor, and for a saved script its versions and their diffs. */
export function ScriptEditorPage({ id }: { id?: string }) {
  const existing = id === undefined ? undefined : Number(id);
  const loaded = useLoad(async () => (existing === undefined ? undefined : api('GET /api/scripts/:id', { params: { id: existing } })), [existing]);
  if (loaded.error) return <Notice kind="error">{loaded.error}</Notice>;
  if (existing !== undefined && !loaded.data) return <p class="muted">Loading the script…</p>;
  return (
    <>
      <PageTitle title={loaded.data ? `Script “${loaded.data.name}”` : 'New script'}>
        <a class="button" href="/scripts">
          All scripts
        </a>
      </PageTitle>
      <ScriptForm key={loaded.data?.id ?? 'new'} script={loaded.data} saved={loaded.reload} />
      {loaded.data && <ScriptVersions key={loaded.data.version} script={loaded.data} />}
    </>
  );
}

function ScriptForm({ script, saved }: { script: Script | undefined; saved: () => void }) {
  const [name, setName] = useState(script?.name ?? '');
  const [description, setDescription] = useState(script?.description ?? '');
  const [runsOn, setRunsOn] = useState<ScriptTarget>(script?.runs_on ?? 'guest');
  const [interpreter, setInterpreter] = useState<ScriptInterpreter>(script?.interpreter ?? 'bash');
  const [body, setBody] = useState(script?.body ?? NEW_BODY);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [outcome, setOutcome] = useState<{ kind: 'success' | 'error'; text: string }>();
  const [busy, setBusy] = useState(false);

  async function save(event: Event) {
    event.preventDefault();
    setBusy(true);
    setErrors({});
    setOutcome(undefined);
    try {
      const input = { body: { name, description, runs_on: runsOn, interpreter, body } };
      const result = script ? await api('PUT /api/scripts/:id', { params: { id: script.id }, ...input }) : await api('POST /api/scripts', input);
      setOutcome({ kind: 'success', text: `Script “${result.name}” saved as version ${result.version}.` });
      if (script) saved();
      else navigate(`/scripts/${result.id}`);
    } catch (e) {
      if (e instanceof ApiError && Object.keys(e.fields).length) setErrors(e.fields);
      else setOutcome({ kind: 'error', text: messageOf(e) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card" onSubmit={save} noValidate data-testid="script-form">
      {outcome && <Notice kind={outcome.kind}>{outcome.text}</Notice>}
      <Field id="script-name" label="Name" error={errors.name}>
        <input id="script-name" value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field id="script-description" label="Description" error={errors.description}>
        <input id="script-description" value={description} maxLength={500} onInput={(e) => setDescription(e.currentTarget.value)} />
      </Field>
      <Field id="script-runs-on" label="Runs on" error={errors.runs_on} hint="On the host only where the agent was installed with --allow-scripts">
        <select id="script-runs-on" value={runsOn} onChange={(e) => setRunsOn(e.currentTarget.value as ScriptTarget)}>
          <option value="guest">Guests (pct exec, qm guest exec)</option>
          <option value="host">The host itself</option>
        </select>
      </Field>
      <Field id="script-interpreter" label="Interpreter" error={errors.interpreter} hint="It reads the script on standard input (<interpreter> -s)">
        <select id="script-interpreter" value={interpreter} onChange={(e) => setInterpreter(e.currentTarget.value as ScriptInterpreter)}>
          <option value="bash">bash</option>
          <option value="sh">sh</option>
          <option value="python3">python3</option>
        </select>
      </Field>
      <Field id="script-body" label="Script" error={errors.body} hint="At most 64 KiB. Every saved change is a version; the last 20 are kept.">
        <textarea id="script-body" class="code" rows={18} spellcheck={false} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
      </Field>
      <div class="form-actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : script ? 'Save script' : 'Add script'}
        </button>
      </div>
    </form>
  );
}


function ScriptVersions({ script }: { script: Script }) {
  const versions = useLoad(() => api('GET /api/scripts/:id/versions', { params: { id: script.id } }), [script.id]);
  const [to, setTo] = useState<number>(script.version);
  const [against, setAgainst] = useState<number | 'none'>();
  const [shown, setShown] = useState<{ text: string; diff: boolean } | { error: string }>();
  const list: ScriptVersion[] = versions.data ?? [];
  // By default a version is compared with the one kept before it; the oldest is shown whole.
  const before = list.find((v) => v.version < to)?.version;
  const from = against ?? before ?? 'none';

  useEffect(() => {
    if (!versions.data) return;
    const path =
      from === 'none'
        ? pathOf('/api/scripts/:id/versions/:v', { id: script.id, v: to })
        : pathOf('/api/scripts/:id/versions/:v/diff', { id: script.id, v: to }, { against: from });
    fetchText(path).then(
      (body) => setShown({ text: body, diff: from !== 'none' }),
      (e: Error) => setShown({ error: e.message }),
    );
  }, [versions.data, script.id, to, from]);

  if (versions.error) return <Notice kind="error">{versions.error}</Notice>;
  if (!versions.data) return <p class="muted">Loading versions…</p>;
  return (
    <section class="card" data-testid="script-versions">
      <h2>Versions</h2>
      <ul class="plain">
        {list.map((v) => (
          <li key={v.version}>
            <button type="button" class="link" aria-pressed={v.version === to} onClick={() => (setTo(v.version), setAgainst(undefined))}>
              Version {v.version}
            </button>{' '}
            <span class="muted">
              {v.size.toLocaleString('en')} bytes, {v.updated_by}, <Time iso={v.updated_at} />
            </span>
          </li>
        ))}
      </ul>
      <div class="inline-fields">
        <Field id="diff-to" label="Show version">
          <select id="diff-to" value={String(to)} onChange={(e) => (setTo(Number(e.currentTarget.value)), setAgainst(undefined))}>
            {list.map((v) => (
              <option key={v.version} value={String(v.version)}>
                {v.version}
              </option>
            ))}
          </select>
        </Field>
        <Field id="diff-against" label="Compared with">
          <select id="diff-against" value={String(from)} onChange={(e) => setAgainst(e.currentTarget.value === 'none' ? 'none' : Number(e.currentTarget.value))}>
            <option value="none">nothing (the whole version)</option>
            {list
              .filter((v) => v.version !== to)
              .map((v) => (
                <option key={v.version} value={String(v.version)}>
                  version {v.version}
                </option>
              ))}
          </select>
        </Field>
      </div>
      {shown && 'error' in shown && <Notice kind="error">{shown.error}</Notice>}
      {shown && 'text' in shown && (
        <pre class="config-view" data-testid={shown.diff ? 'script-diff' : 'script-text'}>
          {shown.diff ? <UnifiedDiff text={shown.text} /> : shown.text}
        </pre>
      )}
    </section>
  );
}
