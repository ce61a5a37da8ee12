import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { tagProblem } from './check-tag.mjs';
import { classifyCommit, releaseNotes, renderNotes } from './release-notes.mjs';

const root = path.resolve(import.meta.dirname, '..');

describe('check-tag', () => {
  it('accepts exactly v + the package version', () => {
    expect(tagProblem('v1.2.3', '1.2.3')).toBeNull();
    expect(tagProblem('v2.0.0-rc.1', '2.0.0-rc.1')).toBeNull();
  });

  it.each([
    ['v1.2.4', '1.2.3'],
    ['1.2.3', '1.2.3'],
    ['v1.2', '1.2.3'],
    ['v1.2.3.4', '1.2.3'],
    ['V1.2.3', '1.2.3'],
    ['v01.2.3', '1.2.3'],
    ['', '1.2.3'],
    ['release-1.2.3', '1.2.3'],
  ])('rejects tag %j for version %j', (tag, version) => {
    expect(tagProblem(tag, version)).toMatch(/does not match|no tag/);
  });

  it('rejects a package version that is not semantic', () => {
    expect(tagProblem('v1.2', '1.2')).toMatch(/not a semantic version/);
  });

  it('as a script: exits 0 for this package\'s tag and 1 with the reason otherwise', async () => {
    const ok = await execa(process.execPath, ['build/check-tag.mjs', `v${pkg.version}`], { cwd: root, reject: false });
    expect(ok.exitCode).toBe(0);
    const bad = await execa(process.execPath, ['build/check-tag.mjs', 'v99.0.0'], { cwd: root, reject: false });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr.trim()).toBe(`check-tag: tag v99.0.0 does not match package.json version ${pkg.version} (expected v${pkg.version})`);
  });
});

describe('release notes grouping', () => {
  it.each([
    ['feat: search by stack', 'features', 'Search by stack'],
    ['feat(jobs): run a job now', 'features', 'jobs: Run a job now'],
    ['fix: keep history on rename', 'fixes', 'Keep history on rename'],
    ['fix(desktop): focus the first window', 'fixes', 'desktop: Focus the first window'],
    ['Add the usage reporter', 'features', 'Add the usage reporter'],
    ['Added CSV export', 'features', 'Added CSV export'],
    ['Desktop: Add a data folder menu item', 'features', 'Desktop: Add a data folder menu item'],
    ['Fix a crash on empty import', 'fixes', 'Fix a crash on empty import'],
    ['Fixes #12: trailing slash in origin', 'fixes', 'Fixes #12: trailing slash in origin'],
    ['Registry: Fix sorting by vmid', 'fixes', 'Registry: Fix sorting by vmid'],
    ['chore: bump dependencies', 'other', 'Bump dependencies'],
    ['docs(readme): container section', 'other', 'readme: Container section'],
    ['Foundation: skeleton and config', 'other', 'Foundation: skeleton and config'],
    ['Addressing review comments', 'other', 'Addressing review comments'],
    ['Fixture files for bats', 'other', 'Fixture files for bats'],
    ['feature: not a conventional type', 'other', 'feature: not a conventional type'],
    ["Merge branch 'desktop'", 'skip', "Merge branch 'desktop'"],
    ['Merge pull request #7 from me/desktop', 'skip', 'Merge pull request #7 from me/desktop'],
  ])('%j goes to %s', (subject, group, text) => {
    expect(classifyCommit(subject)).toMatchObject({ group, text });
  });

  it('marks breaking changes', () => {
    expect(classifyCommit('feat(api)!: drop the v1 backup format')).toEqual({ group: 'features', text: 'api: Drop the v1 backup format', breaking: true });
  });

  it('renders the groups oldest first, leaving empty groups out', () => {
    const notes = renderNotes(
      [
        { hash: 'c'.repeat(40), subject: 'fix: second fix' },
        { hash: 'b'.repeat(40), subject: 'feat: a feature' },
        { hash: 'a'.repeat(40), subject: 'fix: first fix' },
      ],
      { tag: 'v1.1.0', previousTag: 'v1.0.0' },
    );
    expect(notes).toBe(
      ['Changes since v1.0.0.', '', '## New features', '', '- A feature (bbbbbbb)', '', '## Bug fixes', '', '- First fix (aaaaaaa)', '- Second fix (ccccccc)', ''].join('\n'),
    );
    expect(renderNotes([], { tag: 'v1.0.1', previousTag: 'v1.0.0' })).toBe('Changes since v1.0.0.\n\nNo changes.\n');
  });
});

describe('release notes from a real history', () => {
  let repo: string;
  const hashes: Record<string, string> = {};

  async function git(...args: string[]) {
    return (await execa('git', args, { cwd: repo, env: { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } })).stdout;
  }
  async function commit(subject: string) {
    // One file per commit, so the branch below merges without conflicts.
    const file = `change-${Object.keys(hashes).length}.txt`;
    fs.writeFileSync(path.join(repo, file), `${subject}\n`);
    await git('add', file);
    await git('commit', '-q', '-m', subject, '-m', 'Body text: fix: this line is not the subject.');
    hashes[subject] = await git('rev-parse', 'HEAD');
  }

  beforeAll(async () => {
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-notes-'));
    await git('init', '-q', '-b', 'main');
    await git('config', 'user.name', 'Test');
    await git('config', 'user.email', 'test@example.invalid');
    await git('config', 'commit.gpgsign', 'false');
    await commit('Foundation: skeleton');
    await commit('feat: instances API');
    await git('tag', 'v0.1.0');
    await commit('feat(desktop): single instance');
    await commit('Fix the history order');
    await commit('chore: tidy');
    await git('checkout', '-q', '-b', 'topic');
    await commit('Add the data folder menu item');
    await git('checkout', '-q', 'main');
    await commit('fix(registry): reject vmid 0');
    await git('merge', '-q', '--no-ff', '-m', "Merge branch 'topic'", 'topic');
    await git('tag', '-a', 'v0.2.0', '-m', 'v0.2.0');
    await commit('feat: not released yet');
  });
  afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));

  const short = (subject: string) => hashes[subject]!.slice(0, 7);

  it('lists only the commits since the previous tag, grouped, without merges or later commits', () => {
    expect(releaseNotes(repo, 'v0.2.0')).toBe(
      [
        'Changes since v0.1.0.',
        '',
        '## New features',
        '',
        `- desktop: Single instance (${short('feat(desktop): single instance')})`,
        `- Add the data folder menu item (${short('Add the data folder menu item')})`,
        '',
        '## Bug fixes',
        '',
        `- Fix the history order (${short('Fix the history order')})`,
        `- registry: Reject vmid 0 (${short('fix(registry): reject vmid 0')})`,
        '',
        '## Other changes',
        '',
        `- Tidy (${short('chore: tidy')})`,
        '',
      ].join('\n'),
    );
  });

  it('takes the whole history for the first release', () => {
    const notes = releaseNotes(repo, 'v0.1.0');
    expect(notes.split('\n')[0]).toBe('First release: every change up to v0.1.0.');
    expect(notes).toContain(`- Instances API (${short('feat: instances API')})`);
    expect(notes).toContain(`- Foundation: skeleton (${short('Foundation: skeleton')})`);
  });

  it('as a script prints the notes for a tag and fails with one line for an unknown tag', async () => {
    const ok = await execa(process.execPath, [path.join(root, 'build/release-notes.mjs'), 'v0.2.0', '--cwd', repo]);
    expect(ok.stdout).toBe(releaseNotes(repo, 'v0.2.0').trimEnd());
    const bad = await execa(process.execPath, [path.join(root, 'build/release-notes.mjs'), 'v9.9.9', '--cwd', repo], { reject: false });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });
});
