// The Storage section's dialogs check their fields with copies of the storage contract's patterns and
// lists (the bundle may not take the zod module they live in by value): the copies are the contract's.
import { describe, expect, it } from 'vitest';
import * as contract from '../server/contract/inputs/storage.js';
import * as dialog from '../renderer/pages/hosts/storageForm.js';

describe('the storage dialogs’ patterns', () => {
  it('FILE_NAME is the contract’s', () => {
    expect(dialog.FILE_NAME.source).toBe(contract.FILE_NAME.source);
    expect(dialog.FILE_NAME.flags).toBe(contract.FILE_NAME.flags);
  });

  it.each(['DOWNLOAD_CONTENTS', 'PUSH_CONTENTS', 'CHECKSUM_ALGORITHMS'] as const)('%s is the contract’s', (name) => {
    expect(dialog[name]).toEqual(contract[name]);
  });

  it('what the dialog refuses, the contract refuses too, and the other way round', () => {
    const cases = [
      { url: 'https://example.org/debian.iso', filename: 'debian.iso', content: 'iso' },
      { url: 'ftp://example.org/debian.iso', filename: 'debian.iso', content: 'iso' },
      { url: 'https://example.org/debian.iso', filename: '.hidden', content: 'iso' },
      { url: 'https://example.org/debian.iso', filename: 'debian.iso', content: 'iso', checksum: 'a'.repeat(64), checksum_algorithm: 'sha512' as const },
      { url: 'https://example.org/debian.iso', filename: 'debian.iso', content: 'iso', checksum: 'a'.repeat(128), checksum_algorithm: 'sha512' as const },
      { url: 'https://me:secret@example.org/debian.iso', filename: 'debian.iso', content: 'iso' },
    ];
    const storage = { storage: 'local', content: ['iso', 'vztmpl', 'import'] };
    for (const c of cases) {
      const form = { checksum: '', checksum_algorithm: 'sha256' as const, ...c };
      const mine = Object.keys(dialog.downloadBody(form, storage).errors).length === 0;
      expect(mine, JSON.stringify(c)).toBe(contract.DownloadBody.safeParse(dialog.downloadBody(form, storage).body).success);
    }
  });
});
