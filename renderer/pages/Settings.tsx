import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Notice, PageTitle } from '../components/ui';
import { plural } from '../format';
import { previewBackup, type Preview } from '../backupPreview';

export function SettingsPage() {
  const [preview, setPreview] = useState<Preview>();
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function choose(event: Event) {
    const input = event.currentTarget as HTMLInputElement;
    setPreview(undefined);
    setError(undefined);
    setDone(undefined);
    const file = input.files?.[0];
    if (!file) return;
    try {
      setPreview(previewBackup(file.name, await file.text()));
    } catch (e) {
      setError(e instanceof Error ? e.message : 'The file could not be read.');
    }
  }

  async function replace() {
    if (!preview) return;
    setBusy(true);
    setError(undefined);
    try {
      const { imported } = await api<{ imported: number }>('POST', '/api/import', preview.text);
      setDone(`Imported ${plural(imported, 'instance')} from ${preview.fileName}.`);
      setPreview(undefined);
    } catch (e) {
      // Import errors name the row in their message (`instances[3] (vmid 104, "nextcloud"): ...`).
      const rows = e instanceof ApiError ? Object.values(e.fields) : [];
      setError(`Import refused: ${rows.length ? `${rows.join('; ')}.` : messageOf(e)} Nothing was changed.`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section>
      <PageTitle title="Settings" />
      <div class="detail-grid">
        <div class="card">
          <h2>Export</h2>
          <p>Download the whole registry as one JSON file: instances, jobs with their settings, and recent runs.</p>
          <Notice kind="warning">The file holds the job API keys and tokens in clear text. Keep it somewhere safe.</Notice>
          <a class="button primary" href="/api/export" download>
            Download backup
          </a>
        </div>
        <div class="card">
          <h2>Import</h2>
          <p>Restore a backup. It replaces every instance (and the jobs, when the file has them).</p>
          <div class="field">
            <label for="backup-file">Backup file</label>
            <input id="backup-file" type="file" accept="application/json,.json" onChange={choose} />
          </div>
          {error && <Notice kind="error">{error}</Notice>}
          {done && <Notice kind="success">{done}</Notice>}
          {preview && (
            <div class="preview" data-testid="import-preview">
              <h3>{preview.fileName}</h3>
              <dl class="props">
                <dt>Backup version</dt>
                <dd>{preview.version}</dd>
                {preview.exportedAt && (
                  <>
                    <dt>Exported</dt>
                    <dd>{preview.exportedAt}</dd>
                  </>
                )}
                <dt>Instances</dt>
                <dd data-testid="preview-instances">{preview.instances}</dd>
                <dt>Jobs</dt>
                <dd data-testid="preview-jobs">{preview.jobs ?? 'not in this file (kept)'}</dd>
                <dt>Job runs</dt>
                <dd data-testid="preview-runs">{preview.runs ?? 'not in this file'}</dd>
                <dt>Change history</dt>
                <dd data-testid="preview-history">
                  {preview.history !== null
                    ? `${preview.history.toLocaleString('en')} ${preview.history === 1 ? 'entry' : 'entries'}, restored as they were`
                    : 'not in this file (each instance starts with one "imported" entry)'}
                </dd>
              </dl>
              <Notice kind="warning">
                Importing replaces all current instances and their history with the {plural(preview.instances, 'instance')}
                {preview.history !== null ? ' and the change history' : ''} in this file
                {preview.jobs !== null ? ', and replaces the jobs and their runs' : ''}. This cannot be undone; export first if unsure.
              </Notice>
              <div class="form-actions">
                <button type="button" class="danger" onClick={replace} disabled={busy}>
                  {busy ? 'Importing…' : 'Replace registry with this backup'}
                </button>
                <button type="button" onClick={() => setPreview(undefined)}>
                  Cancel
                </button>
              </div>
            </div>
          )}
        </div>
      </div>
    </section>
  );
}
