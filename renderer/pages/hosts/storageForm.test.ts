import { describe, expect, it } from 'vitest';
import { operationWhat } from './operationLive';
import { algorithmFor, bytes, contentFor, contentsOf, downloadBody, filenameFromUrl, fullness, volumeParts, type DownloadForm } from './storageForm';

const local = { storage: 'local', content: ['iso', 'vztmpl', 'backup', 'snippets'] };
const form = (extra: Partial<DownloadForm> = {}): DownloadForm => ({
  url: 'https://cdimage.debian.org/debian-cd/current/amd64/iso-cd/debian-12.9.0-amd64-netinst.iso',
  filename: 'debian-12.9.0-amd64-netinst.iso',
  content: 'iso',
  checksum: '',
  checksum_algorithm: 'sha256',
  ...extra,
});

describe('the download form', () => {
  it('takes the file name from the URL’s last path segment, decoded, ignoring the query', () => {
    expect(filenameFromUrl('https://example.org/isos/debian-12.iso?mirror=1#x')).toBe('debian-12.iso');
    expect(filenameFromUrl('http://example.org/templates/debian%2012.tar.zst/')).toBe('debian 12.tar.zst');
    expect(filenameFromUrl('https://example.org/')).toBe('');
    expect(filenameFromUrl('not a url')).toBe('');
  });

  it('offers only the contents the storage holds, the one the name suggests first', () => {
    expect(contentsOf(local, ['iso', 'vztmpl', 'import'])).toEqual(['iso', 'vztmpl']);
    expect(contentsOf(undefined, ['iso'])).toEqual([]);
    expect(contentFor('debian-12-standard_12.7-1_amd64.tar.zst', ['iso', 'vztmpl'])).toBe('vztmpl');
    expect(contentFor('user-data.yaml', ['iso', 'snippets'])).toBe('snippets');
    expect(contentFor('disk.qcow2', ['iso', 'import'])).toBe('import');
    // A name that suggests what the storage does not hold: its first content.
    expect(contentFor('disk.qcow2', ['iso', 'vztmpl'])).toBe('iso');
  });

  it('makes the body the server takes, and sends the checksum with its algorithm only when one is given', () => {
    expect(downloadBody(form(), local)).toEqual({ body: { url: form().url, filename: form().filename, content: 'iso' }, errors: {} });
    const sum = 'a'.repeat(128);
    expect(downloadBody(form({ checksum: ` ${sum} `, checksum_algorithm: 'sha512' }), local).body).toMatchObject({ checksum: sum, checksum_algorithm: 'sha512' });
  });

  it('says what is wrong beside each field, as the server would', () => {
    const { errors } = downloadBody(form({ url: 'ftp://example.org/a.iso', filename: '../etc/passwd', content: 'import', checksum: 'abc' }), local);
    expect(errors).toEqual({
      url: 'must be an http or https URL',
      filename: 'must be a file name without a path: letters, digits, . _ - (at most 255)',
      content: 'local does not hold import',
      checksum: 'a SHA-256 has 64 hex digits; this has 3',
    });
    expect(downloadBody(form({ checksum: 'z'.repeat(64) }), local).errors).toEqual({ checksum: 'must be a SHA-256 or SHA-512 in hex' });
    expect(downloadBody(form({ url: 'https://example.org/a b.iso' }), local).errors).toEqual({ url: 'must be an http or https URL' });
    expect(downloadBody(form({ url: 'https://me:secret@example.org/a.iso' }), local).errors).toEqual({ url: 'must not carry a user name or password (user:password@): use a URL that needs none' });
  });

  it('picks the algorithm a pasted checksum’s length says', () => {
    expect(algorithmFor('f'.repeat(128), 'sha256')).toBe('sha512');
    expect(algorithmFor('f'.repeat(64), 'sha512')).toBe('sha256');
    expect(algorithmFor('f'.repeat(10), 'sha512')).toBe('sha512');
  });
});

describe('storage figures', () => {
  it('splits a volume id into its content and name', () => {
    expect(volumeParts('local:iso/debian-12.iso')).toEqual({ content: 'iso', name: 'debian-12.iso' });
    expect(volumeParts('local:import/sub/disk.qcow2')).toEqual({ content: 'import', name: 'sub/disk.qcow2' });
  });

  it('tells how full a storage is only when Proxmox said', () => {
    expect(fullness({ avail: 25, total: 100 })).toEqual({ used: 75, share: 0.75 });
    expect(fullness({ avail: null, total: 100 })).toBeUndefined();
    expect(fullness({ avail: 0, total: 0 })).toBeUndefined();
  });

  it('writes sizes in binary units', () => {
    expect([bytes(512), bytes(1536), bytes(200 * 2 ** 20), bytes(50 * 2 ** 30)]).toEqual(['512 B', '1.5 KiB', '200 MiB', '50.0 GiB']);
  });

  it('names downloads and pushes in the operations list', () => {
    expect(operationWhat({ type: 'download', action: null, vmid: null, params: { storage: 'local', filename: 'debian.iso' } })).toBe('download of debian.iso to local');
    expect(operationWhat({ type: 'upload', action: null, vmid: null, params: { storage: 'local', file_id: 3, name: 'user-data.yaml' } })).toBe('push of user-data.yaml to local');
  });
});
