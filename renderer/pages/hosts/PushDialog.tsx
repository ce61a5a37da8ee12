import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, FormActions, Notice, useLoad } from '../../components/ui';
import type { CachedFile } from '../../../server/contract/storage';
import { bytes, contentFor, contentsOf, contentWords, PUSH_CONTENTS, pushBody, type PushContent } from './storageForm';
import { TransferProgress } from './TransferProgress';

interface Props {
  /** Fixed when opened from a host's Storage section; chosen among the online hosts otherwise. */
  host?: { id: number; hostname: string };
  /** Fixed when opened from Settings → Files; chosen among the cached files otherwise. */
  file?: CachedFile;
  storage?: string;
  diagnostics: boolean;
  onClose: () => void;
}

/**
 * Push a cached file onto a storage of a host: the agent fetches it from homefleet, checks its size
 * and SHA-256 and puts it in place. The content offered is what the storage holds, the one the file's
 * name suggests first. Then the operation's progress.
 */
export function PushDialog(props: Props) {
  const hosts = useLoad(() => (props.host ? Promise.resolve([]) : api('GET /api/hosts')), []);
  const files = useLoad(() => (props.file ? Promise.resolve(undefined) : api('GET /api/files')), []);
  const [hostId, setHostId] = useState(props.host ? String(props.host.id) : '');
  const [fileId, setFileId] = useState(props.file ? String(props.file.id) : '');
  const [storageName, setStorageName] = useState(props.storage ?? '');
  const [picked, setPicked] = useState<PushContent>();
  const [replace, setReplace] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [started, setStarted] = useState<{ operationId: string; what: string; volid: string }>();
  const storages = useLoad(() => (hostId ? api('GET /api/hosts/:id/storage', { params: { id: hostId } }) : Promise.resolve([])), [hostId]);

  const online = (hosts.data ?? []).filter((x) => x.status === 'online');
  const host = props.host ?? online.find((x) => String(x.id) === hostId);
  const file = props.file ?? files.data?.files.find((f) => String(f.id) === fileId);
  const targets = (storages.data ?? []).filter((s) => contentsOf(s, PUSH_CONTENTS).length > 0);
  const storage = targets.find((s) => s.storage === storageName) ?? targets[0];
  const contents = contentsOf(storage, PUSH_CONTENTS);
  // The content picked by hand while the storage holds it, else the one the file's name suggests.
  const content = picked && contents.includes(picked) ? picked : file ? contentFor(file.name, contents) : contents[0];

  async function submit(e: Event) {
    e.preventDefault();
    if (busy) return;
    const wrong: Record<string, string> = {};
    if (!host) wrong.host = 'choose a host';
    if (!file) wrong.file_id = 'choose a file';
    if (!storage) wrong.storage = 'choose a storage that holds ISO images, container templates, snippets or import';
    else if (!content) wrong.content = 'choose a content';
    setErrors(wrong);
    setError(undefined);
    if (!host || !file || !storage || !content) return;
    setBusy(true);
    try {
      const accepted = await api('POST /api/hosts/:id/storage/:storage/files', { params: { id: host.id, storage: storage.storage }, body: pushBody(file.id, content, replace) });
      setStarted({ operationId: accepted.operation_id, what: `${file.name} to ${storage.storage} on ${host.hostname}`, volid: `${storage.storage}:${content}/${file.name}` });
    } catch (err) {
      setError(messageOf(err));
      if (err instanceof ApiError) setErrors(err.fields);
    } finally {
      setBusy(false);
    }
  }

  const title = props.file ? `Push ${props.file.name} to a host` : `Push a file to ${props.host?.hostname ?? 'a host'}`;
  if (started) {
    return (
      <Dialog id="push-dialog" title={title} onClose={props.onClose}>
        <TransferProgress operationId={started.operationId} what={started.what} volid={started.volid} diagnostics={props.diagnostics} />
        <div class="form-actions">
          <button type="button" onClick={props.onClose}>
            Close
          </button>
        </div>
      </Dialog>
    );
  }
  const loadError = hosts.error ?? files.error ?? storages.error;
  return (
    <Dialog id="push-dialog" title={title} onClose={props.onClose}>
      <form onSubmit={submit} noValidate aria-label={title}>
        {loadError && <Notice kind="error">{loadError}</Notice>}
        {!props.file && (
          <Field id="push-file" label="File" error={errors.file_id} hint={files.data?.files.length === 0 ? 'The cache is empty: upload a file in Settings → Files.' : undefined}>
            <select id="push-file" value={fileId} onChange={(e) => setFileId(e.currentTarget.value)}>
              <option value="">choose a cached file</option>
              {files.data?.files.map((f) => (
                <option key={f.id} value={String(f.id)}>
                  {f.name} ({bytes(f.size)})
                </option>
              ))}
            </select>
          </Field>
        )}
        {!props.host && (
          <Field id="push-host" label="Host" error={errors.host} hint={hosts.data && online.length === 0 ? 'No host is online.' : undefined}>
            <select id="push-host" value={hostId} onChange={(e) => setHostId(e.currentTarget.value)}>
              <option value="">choose an online host</option>
              {online.map((x) => (
                <option key={x.id} value={String(x.id)}>
                  {x.hostname}
                </option>
              ))}
            </select>
          </Field>
        )}
        <div class="form-grid">
          <Field id="push-storage" label="Storage" error={errors.storage} hint={hostId && storages.data && targets.length === 0 ? 'This host reports no storage for ISO images, templates, snippets or import.' : undefined}>
            <select id="push-storage" value={storage?.storage ?? ''} onChange={(e) => setStorageName(e.currentTarget.value)} disabled={targets.length === 0}>
              {targets.map((s) => (
                <option key={s.storage} value={s.storage}>
                  {s.storage}
                  {s.active ? '' : ' (inactive)'}
                </option>
              ))}
            </select>
          </Field>
          <Field id="push-content" label="Content" error={errors.content} hint={storage ? `What ${storage.storage} holds.` : undefined}>
            <select id="push-content" value={content ?? ''} onChange={(e) => setPicked(e.currentTarget.value as PushContent)} disabled={contents.length === 0}>
              {contents.map((c) => (
                <option key={c} value={c}>
                  {c} ({contentWords(c)})
                </option>
              ))}
            </select>
          </Field>
        </div>
        <label class="check">
          <input type="checkbox" checked={replace} onChange={(e) => setReplace(e.currentTarget.checked)} /> replace a file of that name with other bytes
        </label>
        {errors.replace && <p class="field-error">{errors.replace}</p>}
        {error && <Notice kind="error">{error}</Notice>}
        <FormActions submit={busy ? 'Asking the host…' : 'Push'} cancel={props.onClose} />
      </form>
    </Dialog>
  );
}
