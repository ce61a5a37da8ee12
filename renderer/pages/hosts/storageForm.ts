import type { DownloadInput, PushInput } from '../../../server/contract/inputs/storage';
import type { HostStorage } from '../../../server/contract/storage';

// Copies of server/contract/inputs/storage.ts (a zod module the bundle may not take by value);
// test/storage-form-patterns.test.ts holds the copies to the contract's.
export const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
export const DOWNLOAD_CONTENTS = ['iso', 'vztmpl', 'import'] as const;
export const PUSH_CONTENTS = ['iso', 'vztmpl', 'snippets', 'import'] as const;
export const CHECKSUM_ALGORITHMS = ['sha256', 'sha512'] as const;
export type DownloadContent = (typeof DOWNLOAD_CONTENTS)[number];
export type PushContent = (typeof PUSH_CONTENTS)[number];

/** Proxmox's content types in words. */
export const CONTENT_WORDS: Record<string, string> = {
  iso: 'ISO images',
  vztmpl: 'container templates',
  snippets: 'snippets',
  import: 'disk images to import',
  images: 'VM disks',
  rootdir: 'container disks',
  backup: 'backups',
};
export const contentWords = (content: string) => CONTENT_WORDS[content] ?? content;

/** What of `offered` a storage holds, in the order offered: what a download or a push may put there. */
export function contentsOf<C extends string>(storage: Pick<HostStorage, 'content'> | undefined, offered: readonly C[]): C[] {
  return storage ? offered.filter((c) => storage.content.includes(c)) : [];
}

/** The URL's last path segment, decoded: the download's file name before anyone edits it ('' when there is none). */
export function filenameFromUrl(url: string): string {
  if (!URL.canParse(url.trim())) return '';
  const last = new URL(url.trim()).pathname.split('/').filter(Boolean).at(-1) ?? '';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** The content a file name suggests, when the storage takes it: `.iso` an ISO image, `.tar.zst` a container template, `.yaml` a snippet, a disk image for import. */
export function contentFor<C extends string>(name: string, allowed: readonly C[]): C | undefined {
  const guess = /\.iso$/i.test(name)
    ? 'iso'
    : /\.tar\.(gz|xz|zst)$/i.test(name)
      ? 'vztmpl'
      : /\.(ya?ml|cfg|conf|sh)$/i.test(name)
        ? 'snippets'
        : /\.(qcow2|raw|vmdk|img|ova)$/i.test(name)
          ? 'import'
          : undefined;
  return allowed.find((c) => c === guess) ?? allowed[0];
}

/** The dialog's fields as typed. */
export interface DownloadForm {
  url: string;
  filename: string;
  content: string;
  checksum: string;
  checksum_algorithm: (typeof CHECKSUM_ALGORITHMS)[number];
}

/** The body of POST …/downloads from the form, and what is wrong with it, field by field, as the server would say it. */
export function downloadBody(form: DownloadForm, storage: Pick<HostStorage, 'storage' | 'content'> | undefined): { body: DownloadInput; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const url = form.url.trim();
  const httpUrl = URL.canParse(url) && /^https?:$/.test(new URL(url).protocol) && !/[\s\u0000-\u001f]/.test(url);
  if (!httpUrl) errors.url = 'must be an http or https URL';
  else if (url.length > 2048) errors.url = 'must be at most 2048 characters';
  else if (new URL(url).username || new URL(url).password) errors.url = 'must not carry a user name or password (user:password@): use a URL that needs none';
  if (!FILE_NAME.test(form.filename)) errors.filename = 'must be a file name without a path: letters, digits, . _ - (at most 255)';
  const allowed = contentsOf(storage, DOWNLOAD_CONTENTS);
  if (!allowed.includes(form.content as DownloadContent)) errors.content = `${storage?.storage ?? 'this storage'} does not hold ${form.content || 'that content'}`;
  const body: DownloadInput = { url, filename: form.filename, content: form.content as DownloadContent };
  const checksum = form.checksum.trim();
  if (checksum) {
    const length = form.checksum_algorithm === 'sha512' ? 128 : 64;
    if (!/^[0-9a-fA-F]+$/.test(checksum)) errors.checksum = 'must be a SHA-256 or SHA-512 in hex';
    else if (checksum.length !== length) errors.checksum = `a ${form.checksum_algorithm === 'sha512' ? 'SHA-512' : 'SHA-256'} has ${length} hex digits; this has ${checksum.length}`;
    body.checksum = checksum;
    body.checksum_algorithm = form.checksum_algorithm;
  }
  return { body, errors };
}

/** The algorithm a pasted checksum's length says (SHA-512: 128 hex digits), else the one chosen. */
export const algorithmFor = (checksum: string, chosen: DownloadForm['checksum_algorithm']): DownloadForm['checksum_algorithm'] =>
  checksum.trim().length === 128 ? 'sha512' : checksum.trim().length === 64 ? 'sha256' : chosen;

/** The body of POST …/files (a push). */
export const pushBody = (fileId: number, content: PushContent, replace: boolean): PushInput => ({ file_id: fileId, content, replace });

/** `local:iso/debian-12.iso` → `{content: 'iso', name: 'debian-12.iso'}`. */
export function volumeParts(volid: string): { content: string; name: string } {
  const rest = volid.slice(volid.indexOf(':') + 1);
  const slash = rest.indexOf('/');
  return slash < 0 ? { content: '', name: rest } : { content: rest.slice(0, slash), name: rest.slice(slash + 1) };
}

/** How full a storage is, when Proxmox said: used bytes and the share of the total, 0–1. */
export function fullness(storage: Pick<HostStorage, 'avail' | 'total'>): { used: number; share: number } | undefined {
  if (storage.total === null || storage.avail === null || storage.total <= 0) return undefined;
  const used = Math.max(0, storage.total - storage.avail);
  return { used, share: Math.min(1, used / storage.total) };
}

/** Bytes in the units people read them in (binary, as Proxmox shows sizes). */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${units[unit]}`;
}
