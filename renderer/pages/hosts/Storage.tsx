import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Notice, Time, useLoad } from '../../components/ui';
import { useCoalesced, useLive } from '../../live';
import type { HostDetail } from '../../../server/contract/hosts';
import type { HostStorage } from '../../../server/contract/storage';
import { DownloadDialog } from './DownloadDialog';
import { PushDialog } from './PushDialog';
import { bytes, contentsOf, contentWords, DOWNLOAD_CONTENTS, fullness, PUSH_CONTENTS, volumeParts } from './storageForm';

/**
 * The host's storages as its agent reports them, each with its volumes of ISO images, container
 * templates, snippets and import. Read again on each heartbeat of this host (the agent sends changed
 * volumes around it) and when a download or push here ends. Administrators download onto a storage
 * from a URL and push cached files to it.
 */
export function StorageCard({ host: h, manage, diagnostics }: { host: HostDetail; manage: boolean; diagnostics: boolean }) {
  const storage = useLoad(() => api('GET /api/hosts/:id/storage', { params: { id: h.id } }), [h.id]);
  const [dialog, setDialog] = useState<{ kind: 'download' | 'push'; storage: string }>();
  const reread = useCoalesced(storage.reload);
  useLive(['host.heartbeat', 'operation.updated', 'reset'], (event) => {
    if (event.type === 'reset') reread();
    else if (event.type === 'host.heartbeat' && event.data.id === h.id) reread();
    else if (event.type === 'operation.updated' && event.data.host_id === h.id && (event.data.type === 'download' || event.data.type === 'upload') && event.data.finished_at) reread();
  });

  const why = h.status === 'online' ? undefined : 'The host is offline: it takes files once it reports again.';
  const list = storage.data ?? [];
  const downloadable = list.filter((s) => contentsOf(s, DOWNLOAD_CONTENTS).length > 0);
  return (
    <div class="card" data-testid="storage">
      <h2>Storage</h2>
      {storage.error && <Notice kind="error">{storage.error}</Notice>}
      {storage.data && list.length === 0 && <p class="muted">The agent has not reported this host’s storages yet.</p>}
      {manage && why && list.length > 0 && <p class="muted">{why}</p>}
      {list.map((s) => (
        <StorageBlock
          key={s.storage}
          storage={s}
          actions={
            manage && (
              <>
                {contentsOf(s, DOWNLOAD_CONTENTS).length > 0 && (
                  <button type="button" disabled={!!why} onClick={() => setDialog({ kind: 'download', storage: s.storage })}>
                    Download from URL…
                  </button>
                )}
                {contentsOf(s, PUSH_CONTENTS).length > 0 && (
                  <button type="button" disabled={!!why} onClick={() => setDialog({ kind: 'push', storage: s.storage })}>
                    Push a cached file…
                  </button>
                )}
              </>
            )
          }
        />
      ))}
      {dialog?.kind === 'download' && <DownloadDialog host={h} storages={downloadable} storage={dialog.storage} diagnostics={diagnostics} onClose={() => setDialog(undefined)} />}
      {dialog?.kind === 'push' && <PushDialog host={h} storage={dialog.storage} diagnostics={diagnostics} onClose={() => setDialog(undefined)} />}
    </div>
  );
}

function StorageBlock({ storage: s, actions }: { storage: HostStorage; actions: ComponentChildren }) {
  const full = fullness(s);
  return (
    <section class="storage" data-storage={s.storage} aria-labelledby={`storage-${s.storage}`}>
      <h3 id={`storage-${s.storage}`}>
        {s.storage} <span class="muted">{s.type}</span>
        {!s.active && <span class="badge badge-op-failed">inactive</span>}
        {s.shared && <span class="badge">shared</span>}
      </h3>
      <p class="muted" data-testid="storage-contents">
        {s.content.map(contentWords).join(', ') || 'no content'}
      </p>
      {full && s.total !== null && s.avail !== null ? (
        <p class="storage-free">
          <meter min={0} max={s.total} value={full.used} high={s.total * 0.9} optimum={0} aria-label={`${s.storage} used`} />{' '}
          <span data-testid="storage-free">
            {bytes(s.avail)} free of {bytes(s.total)}
          </span>
        </p>
      ) : (
        <p class="muted">Free space unknown.</p>
      )}
      {actions && <div class="form-actions">{actions}</div>}
      {contentsOf(s, PUSH_CONTENTS).length > 0 &&
        (s.volumes.length === 0 ? (
          <p class="muted">{s.volumes_at ? 'No ISO images, templates, snippets or import files.' : 'Its files are not listed yet.'}</p>
        ) : (
          <div class="table-wrap">
            <table class="runs stack" data-testid="volumes">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Content</th>
                  <th class="num">Size</th>
                  <th>Made</th>
                </tr>
              </thead>
              <tbody>
                {s.volumes.map((v) => {
                  const { content, name } = volumeParts(v.volid);
                  return (
                    <tr key={v.volid} data-volid={v.volid}>
                      <td data-label="Name" class="mono" title={v.volid}>
                        {name}
                      </td>
                      <td data-label="Content">{content}</td>
                      <td data-label="Size" class="num">
                        {bytes(v.size)}
                      </td>
                      <td data-label="Made">
                        {v.ctime === null ? <span class="muted">—</span> : <Time iso={new Date(v.ctime * 1000).toISOString()} exact={false} />}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        ))}
      {s.volumes_at && (
        <p class="hint">
          Listed <Time iso={s.volumes_at} exact={false} />.
        </p>
      )}
    </section>
  );
}
