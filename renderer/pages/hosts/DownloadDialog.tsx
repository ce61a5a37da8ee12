import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, FormActions, Notice } from '../../components/ui';
import type { HostStorage } from '../../../server/contract/storage';
import { algorithmFor, CHECKSUM_ALGORITHMS, contentFor, contentsOf, contentWords, DOWNLOAD_CONTENTS, downloadBody, filenameFromUrl, type DownloadForm } from './storageForm';
import { TransferProgress } from './TransferProgress';

interface Props {
  host: { id: number; hostname: string };
  /** The host's storages that hold a content a download may put there. */
  storages: HostStorage[];
  storage: string;
  diagnostics: boolean;
  onClose: () => void;
}

/**
 * Download from a URL onto a storage of the host: Proxmox fetches it (and checks the checksum when
 * one is given). The file name follows the URL's last path segment until someone types their own;
 * the content offered is what the chosen storage holds. Then the operation's progress.
 */
export function DownloadDialog({ host: h, storages, storage: first, diagnostics, onClose }: Props) {
  const [storage, setStorage] = useState(first);
  const [form, setForm] = useState<DownloadForm>(() => ({ url: '', filename: '', content: contentsOf(storages.find((s) => s.storage === first), DOWNLOAD_CONTENTS)[0] ?? '', checksum: '', checksum_algorithm: 'sha256' }));
  const [named, setNamed] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [started, setStarted] = useState<{ operationId: string; volid: string; filename: string }>();
  const chosen = storages.find((s) => s.storage === storage);
  const contents = contentsOf(chosen, DOWNLOAD_CONTENTS);

  const setUrl = (url: string) =>
    setForm((f) => {
      const filename = named ? f.filename : filenameFromUrl(url);
      return { ...f, url, filename, content: named || !filename ? f.content : (contentFor(filename, contents) ?? f.content) };
    });
  const chooseStorage = (name: string) => {
    setStorage(name);
    const now = contentsOf(storages.find((s) => s.storage === name), DOWNLOAD_CONTENTS);
    setForm((f) => ({ ...f, content: now.includes(f.content as never) ? f.content : (contentFor(f.filename, now) ?? '') }));
  };

  async function submit(e: Event) {
    e.preventDefault();
    if (busy) return;
    const { body, errors: wrong } = downloadBody(form, chosen);
    setErrors(wrong);
    setError(undefined);
    if (Object.keys(wrong).length) return;
    setBusy(true);
    try {
      const accepted = await api('POST /api/hosts/:id/storage/:storage/downloads', { params: { id: h.id, storage }, body });
      setStarted({ operationId: accepted.operation_id, volid: `${storage}:${body.content}/${body.filename}`, filename: body.filename });
    } catch (err) {
      setError(messageOf(err));
      if (err instanceof ApiError) setErrors(err.fields);
    } finally {
      setBusy(false);
    }
  }

  const title = `Download onto ${h.hostname}`;
  if (started) {
    return (
      <Dialog id="download-dialog" title={title} onClose={onClose}>
        <TransferProgress operationId={started.operationId} what={`${started.filename} to ${storage}`} volid={started.volid} diagnostics={diagnostics} />
        <div class="form-actions">
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </Dialog>
    );
  }
  const invalid = (field: string) => (errors[field] ? 'true' : undefined);
  return (
    <Dialog id="download-dialog" title={title} onClose={onClose}>
      <form onSubmit={submit} noValidate aria-label={title}>
        <Field id="download-url" label="URL" error={errors.url} hint="http or https; the host fetches it itself.">
          <input id="download-url" type="url" autocomplete="off" value={form.url} onInput={(e) => setUrl(e.currentTarget.value)} aria-invalid={invalid('url')} placeholder="https://…/debian-12.iso" />
        </Field>
        <Field id="download-filename" label="File name" error={errors.filename} hint="Taken from the URL; letters, digits, . _ - and no path.">
          <input
            id="download-filename"
            autocomplete="off"
            value={form.filename}
            onInput={(e) => {
              setNamed(true);
              setForm((f) => ({ ...f, filename: e.currentTarget.value }));
            }}
            aria-invalid={invalid('filename')}
          />
        </Field>
        <div class="form-grid">
          <Field id="download-storage" label="Storage" error={errors.storage}>
            <select id="download-storage" value={storage} onChange={(e) => chooseStorage(e.currentTarget.value)}>
              {storages.map((s) => (
                <option key={s.storage} value={s.storage}>
                  {s.storage}
                </option>
              ))}
            </select>
          </Field>
          <Field id="download-content" label="Content" error={errors.content} hint={`What ${storage} holds.`}>
            <select id="download-content" value={form.content} onChange={(e) => setForm((f) => ({ ...f, content: e.currentTarget.value }))} aria-invalid={invalid('content')}>
              {contents.map((c) => (
                <option key={c} value={c}>
                  {c} ({contentWords(c)})
                </option>
              ))}
            </select>
          </Field>
        </div>
        <div class="form-grid">
          <Field id="download-checksum" label="Checksum (optional)" error={errors.checksum} hint="Proxmox checks the file against it.">
            <input
              id="download-checksum"
              autocomplete="off"
              class="mono"
              value={form.checksum}
              onInput={(e) => {
                const checksum = e.currentTarget.value;
                setForm((f) => ({ ...f, checksum, checksum_algorithm: algorithmFor(checksum, f.checksum_algorithm) }));
              }}
              aria-invalid={invalid('checksum')}
            />
          </Field>
          <Field id="download-algorithm" label="Algorithm" error={errors.checksum_algorithm}>
            <select id="download-algorithm" value={form.checksum_algorithm} onChange={(e) => setForm((f) => ({ ...f, checksum_algorithm: e.currentTarget.value as DownloadForm['checksum_algorithm'] }))}>
              {CHECKSUM_ALGORITHMS.map((a) => (
                <option key={a}>{a}</option>
              ))}
            </select>
          </Field>
        </div>
        {error && <Notice kind="error">{error}</Notice>}
        <FormActions submit={busy ? 'Asking the host…' : 'Download'} cancel={onClose} />
      </form>
    </Dialog>
  );
}
