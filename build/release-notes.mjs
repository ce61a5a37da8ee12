#!/usr/bin/env node
// Release notes from the commit history: the commits since the previous v* tag, grouped.
// Usage: node build/release-notes.mjs <tag> [--cwd <repo>]   → Markdown on stdout.
//
// Grouping (first match wins, on the subject line):
//   "New features": `feat:` / `feat(scope):` (conventional), or a plain subject starting with Add/Adds/Added
//                   (also after an area prefix: "Desktop: Add a tray menu")
//   "Bug fixes":    `fix:` / `fix(scope):`, or a plain subject starting with Fix/Fixes/Fixed (same rule)
//   "Other changes": everything else (other conventional types, plain subjects), so no change is hidden
//   from the notes. Merge commits are left out: their content is in the merged commits.
//   A `!` after the conventional type marks a breaking change.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CONVENTIONAL = /^(?<type>feat|fix|docs|style|refactor|perf|test|build|ci|chore|revert)(?:\((?<scope>[^)]*)\))?(?<breaking>!)?:\s*(?<text>.+)$/;
const AREA_PREFIX = /^[A-Z][\w-]*(?: [\w-]+)?:\s+/;

/**
 * @param {string} subject
 * @returns {{ group: 'features' | 'fixes' | 'other' | 'skip', text: string, breaking: boolean }}
 */
export function classifyCommit(subject) {
  const trimmed = subject.trim();
  if (/^Merge (branch|pull request|remote-tracking branch|tag) /.test(trimmed)) return { group: 'skip', text: trimmed, breaking: false };
  const conventional = CONVENTIONAL.exec(trimmed);
  if (conventional?.groups) {
    const { type, scope, breaking, text } = conventional.groups;
    const shown = `${scope ? `${scope}: ` : ''}${capitalise(text.trim())}`;
    const kind = type.toLowerCase();
    const group = kind === 'feat' ? 'features' : kind === 'fix' ? 'fixes' : 'other';
    return { group, text: shown, breaking: breaking === '!' };
  }
  const plain = [trimmed, trimmed.replace(AREA_PREFIX, '')];
  if (plain.some((s) => /^(Add|Adds|Added)\b/.test(s))) return { group: 'features', text: trimmed, breaking: false };
  if (plain.some((s) => /^(Fix|Fixes|Fixed)\b/.test(s))) return { group: 'fixes', text: trimmed, breaking: false };
  return { group: 'other', text: trimmed, breaking: false };
}

function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * @param {{ hash: string, subject: string }[]} commits newest first, as git log lists them
 * @param {{ tag: string, previousTag: string | null }} range
 */
export function renderNotes(commits, { tag, previousTag }) {
  const groups = { features: [], fixes: [], other: [] };
  for (const commit of [...commits].reverse()) {
    const { group, text, breaking } = classifyCommit(commit.subject);
    if (group === 'skip') continue;
    groups[group].push(`- ${breaking ? '**Breaking:** ' : ''}${text} (${commit.hash.slice(0, 7)})`);
  }
  const lines = [previousTag ? `Changes since ${previousTag}.` : `First release: every change up to ${tag}.`, ''];
  for (const [group, title] of [['features', 'New features'], ['fixes', 'Bug fixes'], ['other', 'Other changes']]) {
    if (groups[group].length === 0) continue;
    lines.push(`## ${title}`, '', ...groups[group], '');
  }
  if (lines.length === 2) lines.push('No changes.', '');
  return lines.join('\n');
}

function git(cwd, args) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The newest v* tag reachable from before `tag`, or null for the first release. */
export function previousTag(cwd, tag) {
  try {
    return git(cwd, ['describe', '--tags', '--abbrev=0', '--match', 'v[0-9]*', `${tag}^`]).trim() || null;
  } catch {
    return null;
  }
}

/** Commits in (previousTag, tag], newest first, without merges. */
export function commitsFor(cwd, tag, from) {
  const range = from ? `${from}..${tag}` : tag;
  const out = git(cwd, ['log', '--no-merges', '--format=%H%x1f%s%x1e', range]);
  return out
    .split('\x1e')
    .map((record) => record.trim())
    .filter(Boolean)
    .map((record) => {
      const [hash, subject] = record.split('\x1f');
      return { hash, subject };
    });
}

export function releaseNotes(cwd, tag) {
  const from = previousTag(cwd, tag);
  return renderNotes(commitsFor(cwd, tag, from), { tag, previousTag: from });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const cwdAt = args.indexOf('--cwd');
  const cwd = cwdAt >= 0 ? args.splice(cwdAt, 2)[1] : process.cwd();
  const tag = args[0] ?? process.env.GITHUB_REF_NAME;
  if (!tag) {
    process.stderr.write('usage: node build/release-notes.mjs <tag> [--cwd <repo>]\n');
    process.exit(2);
  }
  try {
    process.stdout.write(releaseNotes(cwd, tag));
  } catch (err) {
    process.stderr.write(`release-notes: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
    process.exit(1);
  }
}
