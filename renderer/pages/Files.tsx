import { useEffect, useRef, useState } from 'preact/hooks';
import { api, messageOf } from '../api';
import { Confirm, Notice, Time, useLoad } from '../components/ui';
import type { CachedFile } from '../../server/contract/storage';
import { useSession } from '../session';
import { CANCELLED, uploadFile, type Upload } from '../upload';
import { PushDialog } from './hosts/PushDialog';
import { bytes } from './hosts/storageForm';

/**
 * Settings → Files: the file cache that pushes to hosts take their bytes from. Everyone who reads
 * hosts sees it; administrators (hosts.manage) upload, push and delete.
 */
export function FileSettings() {
  const session = useSession();
  const manage = session.can('hosts.manage');
  const cache = useLoad(() => api('GET /api/files'), []);
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();
  const [deleting, setDeleting] = useState<number>();
  const [pushing, setPushing] = useState<CachedFile>();

  async function remove(file: CachedFile) {
    setDeleting(undefined);
    try {
      await api('DELETE /api/files/:id', { params: { id: file.id } });
      setMessage({ kind: 'success', text: `${file.name} was deleted from the cache.` });
    } catch (e) {
      setMessage({ kind: 'error', text: `${file.name} was not deleted: ${messageOf(e)}` });
    }
    cache.reload();
  }

  const data = cache.data;
  return (
    <div class="card span-all" data-testid="files">
      <h2>Files</h2>
      <p>Installation media, templates and snippets to push to hosts. Each file is kept once however often it is uploaded; when the cache is full, the least recently used files that no push needs make room.</p>
      {cache.error && <Notice kind="error">{cache.error}</Notice>}
      {data && (
        <p class="storage-free">
          <meter min={0} max={data.cap_bytes} value={data.used_bytes} high={data.cap_bytes * 0.9} optimum={0} aria-label="Cache used" />{' '}
          <span data-testid="cache-used">
            {bytes(data.used_bytes)} of {bytes(data.cap_bytes)} used
          </span>
          <span class="muted"> · uploads up to {bytes(data.max_upload_bytes)}</span>
        </p>
      )}
      {manage && data && (
        <UploadForm
          max={data.max_upload_bytes}
          onDone={(file) => {
            setMessage({ kind: 'success', text: `${file.name} is in the cache (SHA-256 ${file.sha256.slice(0, 12)}…).` });
            cache.reload();
          }}
        />
      )}
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {data?.files.length === 0 && <p class="muted">The cache is empty.</p>}
      {data && data.files.length > 0 && (
        <div class="table-wrap">
          <table class="runs stack" data-testid="file-list">
            <thead>
              <tr>
                <th>Name</th>
                <th class="num">Size</th>
                <th>SHA-256</th>
                <th>Uploaded</th>
                <th>Last used</th>
                {manage && <th></th>}
              </tr>
            </thead>
            <tbody>
              {data.files.map((f) => (
                <tr key={f.id} data-file={f.name}>
                  <td data-label="Name" class="mono">
                    {f.name}
                  </td>
                  <td data-label="Size" class="num">
                    {bytes(f.size)}
                  </td>
                  <td data-label="SHA-256" class="mono" title={f.sha256}>
                    {f.sha256.slice(0, 12)}…
                  </td>
                  <td data-label="Uploaded">
                    {f.uploaded_by}, <Time iso={f.uploaded_at} exact={false} />
                  </td>
                  <td data-label="Last used">
                    <Time iso={f.used_at} exact={false} />
                  </td>
                  {manage && (
                    <td>
                      {deleting === f.id ? (
                        <Confirm
                          question={`Delete ${f.name} (${bytes(f.size)}) from the cache?`}
                          action={`Delete ${f.name}`}
                          label={`Delete ${f.name}`}
                          onConfirm={() => void remove(f)}
                          onCancel={() => setDeleting(undefined)}
                        />
                      ) : (
                        <>
                          <button type="button" onClick={() => setPushing(f)}>
                            Push to host…
                          </button>{' '}
                          <button type="button" class="danger" onClick={() => setDeleting(f.id)}>
                            Delete
                          </button>
                        </>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pushing && (
        <PushDialog
          file={pushing}
          diagnostics={session.can('diagnostics.read')}
          onClose={() => {
            setPushing(undefined);
            cache.reload();
          }}
        />
      )}
    </div>
  );
}

/** Choose a file, then Upload: a progress bar of the bytes sent, and Cancel. A file over the limit is refused before anything is sent. */
function UploadForm({ max, onDone }: { max: number; onDone: (file: CachedFile) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [file, setFile] = useState<File>();
  const [progress, setProgress] = useState<{ sent: number; total: number }>();
  const [error, setError] = useState<string>();
  const upload = useRef<Upload>(undefined);
  useEffect(() => () => upload.current?.cancel(), []);
  const tooBig = file && file.size > max ? `${file.name} is ${bytes(file.size)}: uploads are limited to ${bytes(max)}.` : undefined;

  async function start(e: Event) {
    e.preventDefault();
    if (!file || tooBig || upload.current) return;
    setError(undefined);
    setProgress({ sent: 0, total: file.size });
    upload.current = uploadFile(file, (sent, total) => setProgress({ sent, total }));
    try {
      const cached = await upload.current.done;
      setFile(undefined);
      if (input.current) input.current.value = '';
      onDone(cached);
    } catch (err) {
      setError(messageOf(err) === CANCELLED ? CANCELLED : `${file.name} was not uploaded: ${messageOf(err)}`);
    } finally {
      upload.current = undefined;
      setProgress(undefined);
    }
  }

  const percent = progress && progress.total > 0 ? Math.floor((progress.sent / progress.total) * 100) : 0;
  return (
    <form class="upload" onSubmit={start} aria-label="Upload">
      <div class={`field${tooBig || error ? ' field-invalid' : ''}`}>
        <label for="file-upload">Upload a file</label>
        <input
          id="file-upload"
          ref={input}
          type="file"
          disabled={!!progress}
          onChange={(e) => {
            setFile(e.currentTarget.files?.[0]);
            setError(undefined);
          }}
        />
        {(tooBig || error) && (
          <p class="field-error" id="file-upload-error">
            {tooBig ?? error}
          </p>
        )}
      </div>
      {/* Keyed: were Cancel's element reused as the Upload button, the click that cancels would submit the form again once it re-renders. */}
      {progress ? (
        <div class="upload-progress" key="uploading">
          <progress max={progress.total} value={progress.sent} aria-label={`Uploading ${file?.name ?? ''}`} data-testid="upload-progress" />
          {/* Before the figures, which change width as they count: the button stays where it is. */}
          <button type="button" onClick={() => upload.current?.cancel()}>
            Cancel
          </button>
          <span data-testid="upload-sent">
            {progress.sent >= progress.total ? 'Sent: the server is storing it…' : `${percent}% · ${bytes(progress.sent)} of ${bytes(progress.total)}`}
          </span>
        </div>
      ) : (
        <div class="form-actions" key="upload">
          <button type="submit" class="primary" disabled={!file || !!tooBig}>
            Upload
          </button>
        </div>
      )}
    </form>
  );
}
