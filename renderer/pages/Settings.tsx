import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Notice, PageTitle, Time, useLoad } from '../components/ui';
import type { SnapshotKind, SnapshotList } from '../../server/contract/backup';
import { plural } from '../format';
import { previewBackup, type Preview } from '../backupPreview';
import { Lazy } from '../components/Lazy';
import { useSession } from '../session';

const KIND_LABEL: Record<SnapshotKind, string> = { scheduled: 'scheduled', manual: 'taken by hand', 'pre-import': 'before an import' };

export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

type SnapshotLoad = ReturnType<typeof useLoad<SnapshotList>>;

/** Whole-database snapshots: the list with downloads, and one taken now. Restoring is a local command. */
function Snapshots({ list }: { list: SnapshotLoad }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();

  async function takeNow() {
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      const { snapshot } = await api('POST /api/snapshots');
      setDone(`Snapshot ${snapshot.name} taken (${fileSize(snapshot.size)}).`);
      list.reload();
    } catch (e) {
      setError(`No snapshot taken: ${messageOf(e)}`);
    } finally {
      setBusy(false);
    }
  }

  const data = list.data;
  return (
    <div class="card span-all" data-testid="snapshots">
      <h2>Database snapshots</h2>
      <p>
        A snapshot is a copy of the whole database (instances, history, jobs, accounts, audit), for disaster recovery on this installation.
        Restore one on the server with <code>npm run restore -- &lt;file&gt;</code> while homefleet is stopped (see the README).
      </p>
      {list.error && <Notice kind="error">{list.error}</Notice>}
      {data && !data.enabled && <Notice kind="info">Snapshots are off: {data.reason ?? 'not available'}.</Notice>}
      {data?.enabled && (
        <>
          <p class="muted" data-testid="snapshot-policy">
            {data.interval_hours > 0 ? `Taken every ${data.interval_hours} hours` : 'Scheduled snapshots are off'} and before every import, into{' '}
            <code>{data.directory}</code>. Kept: the last {data.keep.scheduled} scheduled, {data.keep.manual} taken by hand, {data.keep['pre-import']} before imports.
          </p>
          {error && <Notice kind="error">{error}</Notice>}
          {done && <Notice kind="success">{done}</Notice>}
          <div class="form-actions">
            <button type="button" class="primary" onClick={takeNow} disabled={busy}>
              {busy ? 'Taking a snapshot…' : 'Take a snapshot now'}
            </button>
          </div>
          {data.snapshots.length === 0 ? (
            <p class="muted">No snapshots yet.</p>
          ) : (
            <div class="table-wrap">
              <table class="runs stack" data-testid="snapshot-list">
                <thead>
                  <tr>
                    <th>Taken</th>
                    <th>Why</th>
                    <th>Size</th>
                    <th></th>
                  </tr>
                </thead>
                <tbody>
                  {data.snapshots.map((s) => (
                    <tr key={s.name}>
                      <td data-label="Taken">
                        <Time iso={s.taken_at} />
                      </td>
                      <td data-label="Why">{KIND_LABEL[s.kind]}</td>
                      <td data-label="Size">{fileSize(s.size)}</td>
                      <td>
                        <a href={`/api/snapshots/${encodeURIComponent(s.name)}`} download={s.name}>
                          Download
                        </a>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </div>
  );
}

/**
 * After an import: its pre-import snapshot is named once its check is done, just after the import
 * answers, so the list is read again until it shows a pre-import snapshot it did not have (a few seconds at most).
 */
async function awaitPreImportSnapshot(known: Set<string>, reload: () => Promise<SnapshotList>): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const list = await reload().catch(() => undefined);
    if (!list?.enabled || list.snapshots.some((s) => s.kind === 'pre-import' && !known.has(s.name))) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Its own chunk, as the notification settings: server keys for administrators, cloud configs for operators too. */
const provisioning = (admin: boolean) => () =>
  import('./Provisioning').then((m) => () => (
    <>
      {admin && <m.ServerKeySettings />}
      <m.CloudConfigSettings />
    </>
  ));

/** Settings → Files, its own chunk: every role that reads hosts sees the file cache. */
const files = () => import('./Files').then((m) => m.FileSettings);
const policies = () => import('./Policies').then((m) => m.PolicySettings);

/** Administrators see every section; operators (content.manage) the cloud configs and the files; viewers the files. */
export function SettingsPage() {
  const session = useSession();
  if (session.can('settings.manage')) return <AdminSettings />;
  return (
    <section>
      <PageTitle title="Settings" />
      <div class="detail-grid">
        {session.can('content.manage') && <Lazy key="provisioning" load={provisioning(false)} />}
        {session.can('hosts.read') && <Lazy key="files" load={files} />}
        {session.can('fleet.read') && <Lazy key="policies" load={policies} />}
      </div>
    </section>
  );
}

function AdminSettings() {
  const snapshots = useLoad(() => api('GET /api/snapshots'), []);
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
    const known = new Set((snapshots.data?.snapshots ?? []).map((s) => s.name));
    try {
      const { imported } = await api('POST /api/import', { raw: preview.text });
      setDone(`Imported ${plural(imported, 'instance')} from ${preview.fileName}.${snapshots.data?.enabled ? ' What it replaced is kept in a pre-import snapshot below.' : ''}`);
      setPreview(undefined);
      void awaitPreImportSnapshot(known, async () => {
        const list = await api('GET /api/snapshots');
        snapshots.update(() => list);
        return list;
      });
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
                {preview.jobs !== null ? ', and replaces the jobs and their runs' : ''}.{' '}
                {snapshots.data?.enabled
                  ? 'A snapshot of the whole database is taken first (listed under Database snapshots below); restoring it on the server undoes the import.'
                  : 'This cannot be undone here (this server keeps no snapshots); export first if unsure.'}
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
        <Snapshots list={snapshots} />
        {/* Its own chunk: most visits to Settings are for backups. */}
        <Lazy
          load={() =>
            import('./Notifications').then((m) => () => (
              <>
                <m.NotificationSettings />
                <m.AlertRuleSettings />
              </>
            ))
          }
        />
        <Lazy key="provisioning" load={provisioning(true)} />
        <Lazy key="files" load={files} />
        <Lazy key="policies" load={policies} />
      </div>
    </section>
  );
}
