import { describe, expect, it } from 'vitest';
import { safeNext } from './safeNext';
import { previewBackup } from './backupPreview';

describe('safeNext', () => {
  it('follows only paths inside the app after sign-in', () => {
    expect(safeNext('/instances?state=testing')).toBe('/instances?state=testing');
    for (const hostile of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', '/login?next=/x', null, '']) {
      expect(safeNext(hostile)).toBe('/instances');
    }
  });

  it('checks the path a browser would follow, not the text: dot segments and %2e cannot make //evil.example', () => {
    for (const hostile of ['/.//evil.example', '/..//evil.example/x', '/%2e%2e//evil.example', '/./\\evil.example', '/\t/evil.example', '/\n/evil.example', '/./login?next=/x']) {
      expect([hostile, safeNext(hostile)]).toEqual([hostile, '/instances']);
    }
    expect(safeNext('/jobs/./x/../y?a=1')).toBe('/jobs/y?a=1');
  });
});

describe('previewBackup', () => {
  it('counts what an import would replace; a backup without version is version 1', () => {
    const text = JSON.stringify({ version: 3, exported_at: '2026-01-01T00:00:00Z', instances: [{}, {}], instance_history: [{}, {}, {}], jobs: [{}], job_runs: [] });
    expect(previewBackup('b.json', text)).toEqual({ fileName: 'b.json', text, version: 3, exportedAt: '2026-01-01T00:00:00Z', instances: 2, jobs: 1, runs: 0, history: 3 });
    expect(previewBackup('old.json', '{"instances":[]}')).toMatchObject({ version: 1, instances: 0, jobs: null, runs: null, history: null });
  });
  it('refuses a file that is not JSON or has no instances list, saying why', () => {
    expect(() => previewBackup('x', 'nope')).toThrow('not JSON');
    expect(() => previewBackup('x', '{"jobs":[]}')).toThrow('no "instances" list');
  });
});
