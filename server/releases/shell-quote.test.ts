import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellQuote } from './shell-quote.js';

const nasty = [
  '',
  ' ',
  "x';touch /tmp/homefleet-PWNED;'",
  'https://fleet.example:3103',
  'a b\tc\nd',
  '$(touch /tmp/homefleet-PWNED)',
  '`id`',
  '${HOME}',
  '$HOME',
  "it's",
  "''",
  '\\',
  '"quoted"',
  '*',
  '?',
  '[a-z]',
  '~',
  'a=~/x',
  'x:~',
  '!!',
  '#comment',
  '-n',
  '&& echo hi',
  '|| true',
  '< /etc/passwd',
  '{a,b}',
  '@(x)',
  '\u00e9\u2603',
  'sha256//AbC+/9=',
];

/** What real bash makes of each quoted word: one NUL-terminated argument each, in a command and in an assignment. */
function readBack(words: string[]): { args: string[]; assigned: string[] } {
  const script = [
    'set -u',
    `printf '%s\\0' ${words.map(shellQuote).join(' ')}`,
    ...words.map((w) => `V=${shellQuote(w)}; printf '%s\\0' "$V"`),
  ].join('\n');
  const out = execFileSync('bash', ['-c', script], { cwd: '/', env: { PATH: process.env.PATH, HOME: '/nonexistent-home' } }).toString('utf8');
  const parts = out.split('\0').slice(0, -1);
  return { args: parts.slice(0, words.length), assigned: parts.slice(words.length) };
}

describe('shellQuote', () => {
  it('gives every value back unchanged through real bash, as an argument and in an assignment, running nothing', () => {
    const { args, assigned } = readBack(nasty);
    expect(args).toEqual(nasty);
    expect(assigned).toEqual(nasty);
  });

  it('leaves URLs, tokens and pins as they are and quotes anything else', () => {
    expect(shellQuote('https://fleet.example:3103')).toBe('https://fleet.example:3103');
    expect(shellQuote('hfe_AbC-d_9')).toBe('hfe_AbC-d_9');
    expect(shellQuote('sha256//AbC+/9=')).toBe('sha256//AbC+/9=');
    expect(shellQuote('')).toBe("''");
    expect(shellQuote("x';touch /tmp/p;'")).toBe(`'x'\\'';touch /tmp/p;'\\'''`);
    expect(shellQuote('~')).toBe("'~'");
  });
});
