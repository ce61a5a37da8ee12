import type { CachedFile } from '../server/contract/storage';
import { ApiError, refusal } from './api';

/** An upload under way: what it ends with, and how to stop it. */
export interface Upload {
  done: Promise<CachedFile>;
  cancel(): void;
}

/** The error an upload stopped by its Cancel button ends with. */
export const CANCELLED = 'The upload was cancelled: nothing was kept.';

/**
 * POST /api/files with one `file` part, through XMLHttpRequest because fetch tells nothing of a
 * request body's progress. The session cookie and the Origin go with it as with any same-origin POST.
 */
export function uploadFile(file: File, onProgress: (sent: number, total: number) => void): Upload {
  const xhr = new XMLHttpRequest();
  const done = new Promise<CachedFile>((resolve, reject) => {
    xhr.open('POST', '/api/files');
    xhr.setRequestHeader('accept', 'application/json');
    xhr.responseType = 'text';
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      let data: any;
      try {
        data = JSON.parse(xhr.responseText);
      } catch {
        data = undefined;
      }
      if (xhr.status === 201 && data) resolve(data as CachedFile);
      else reject(refusal(xhr.status, '/api/files', data, xhr.getResponseHeader('retry-after')));
    };
    xhr.onerror = () => reject(new ApiError(0, 'The upload stopped: the server could not be reached. Nothing was kept.'));
    xhr.onabort = () => reject(new ApiError(0, CANCELLED));
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
  return { done, cancel: () => xhr.abort() };
}
