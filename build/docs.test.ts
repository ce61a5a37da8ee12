import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The READMEs are the product's reference, kept next to what they describe. These checks keep them
// from drifting from the code: a variable config.ts reads and the reference does not name, a layout
// table naming a folder that is gone (or missing a new one), a link or anchor that leads nowhere.

const root = path.resolve(import.meta.dirname, '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** Every environment variable config.ts reads: the keys of its VARIABLES table, and any `env.NAME` / `env['NAME']`. */
function configVariables(source: string): string[] {
  const names = new Set<string>();
  const table = /(?:^|\n)const VARIABLES = \{\n([\s\S]*?)\n\};/.exec(source);
  for (const match of table?.[1]?.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm) ?? []) names.add(match[1]!);
  for (const match of source.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g)) names.add((match[1] ?? match[2])!);
  return [...names].sort();
}

/** Markdown without its fenced code blocks (a `# comment` in a shell block is no heading, a `[x](y)` there no link). */
function withoutFences(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** The text under the heading `title` (any level), up to the next heading of the same or a higher level. */
function section(markdown: string, title: string): string {
  const lines = withoutFences(markdown).split('\n');
  const start = lines.findIndex((line) => new RegExp(`^#{1,6} ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`).test(line));
  if (start < 0) return '';
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && /^#+/.exec(line)![0].length <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The first cell of each table row, when it is one or more backticked names: `` `server/` ``, `` `a.ts`, `b.ts` ``. */
function tableNames(markdown: string): string[] {
  const names: string[] = [];
  for (const line of markdown.split('\n')) {
    const cell = /^\|([^|]*)\|/.exec(line)?.[1]?.trim();
    if (!cell || /^-+$/.test(cell)) continue;
    for (const match of cell.matchAll(/`([^`]+)`/g)) names.push(match[1]!);
  }
  return names;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, …. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const match of withoutFences(markdown).matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const text = match[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/** The targets of the Markdown links and images outside code: `[text](target)`, `![alt](target)`. */
function linkTargets(markdown: string): string[] {
  const prose = withoutFences(markdown).replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!);
}

/** What is wrong with the relative links of `file` (a README path from the root): missing files, missing anchors. */
function brokenLinks(file: string, markdown: string, readFile: (file: string) => string | undefined): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not a file of this repository
    const [rawPath = '', anchor] = target.split('#');
    const targetFile = rawPath === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(rawPath)));
    if (targetFile.startsWith('..') || path.posix.isAbsolute(targetFile)) {
      problems.push(`${file}: ${target} leaves the repository`);
      continue;
    }
    if (!fs.existsSync(path.join(root, targetFile))) {
      problems.push(`${file}: ${target} → ${targetFile} does not exist`);
      continue;
    }
    if (anchor === undefined) continue;
    const text = targetFile.endsWith('.md') ? readFile(targetFile) : undefined;
    if (text === undefined) problems.push(`${file}: ${target} has an anchor, but ${targetFile} is not a Markdown file`);
    else if (!anchors(text).has(anchor)) problems.push(`${file}: ${target} → no heading #${anchor} in ${targetFile}`);
  }
  return problems;
}

/** Every README.md of the repository (generated and dot folders left out), as paths from the root. */
function readmes(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory() && !entry.name.startsWith('.') && !ignoredFolders().has(rel)) walk(rel);
      else if (entry.isFile() && entry.name === 'README.md') found.push(rel);
    }
  };
  walk('');
  return found.sort();
}

/** The folders .gitignore leaves out (`node_modules/`, `dist/`, `/screenshots/`, …), as paths from the root. */
function ignoredFolders(): Set<string> {
  const lines = read('.gitignore').split('\n').map((line) => line.trim());
  return new Set(lines.filter((line) => line.endsWith('/') && !line.startsWith('#')).map((line) => line.replace(/^\//, '').replace(/\/$/, '')));
}

/** The folders directly inside `dir` (a path from the root), without dot folders and ignored ones. */
function foldersIn(dir: string): string[] {
  return fs
    .readdirSync(path.join(root, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && !ignoredFolders().has(path.posix.join(dir, entry.name)))
    .map((entry) => `${entry.name}/`)
    .sort();
}

describe('the configuration reference (server/README.md § Configuration)', () => {
  const reference = section(read('server/README.md'), 'Configuration');
  const variables = configVariables(read('server/config.ts'));

  it('is found, and config.ts is read as expected (a parser that finds nothing would pass anything)', () => {
    expect(reference.length).toBeGreaterThan(1000);
    expect(variables).toEqual(expect.arrayContaining(['PORT', 'HOST', 'DB_PATH', 'LOG_LEVEL', 'FLEET_SETUP_TOKEN', 'FLEET_REQUIRE_2FA']));
    expect(variables.length).toBeGreaterThan(25);
  });

  it('names every environment variable server/config.ts reads', () => {
    const missing = variables.filter((name) => !reference.includes(`\`${name}\``));
    expect(missing, 'variables config.ts reads that the table in server/README.md § Configuration does not name').toEqual([]);
  });

  it('names in its table no variable that config.ts does not read', () => {
    const named = tableNames(reference).filter((name) => /^[A-Z][A-Z0-9_]+$/.test(name));
    expect(named.length).toBeGreaterThan(25);
    expect(named.filter((name) => !variables.includes(name))).toEqual([]);
  });

  it('reads a variable from the VARIABLES table or an env.NAME read', () => {
    const source = "const VARIABLES = {\n  PORT: (raw) => raw,\n  FLEET_NEW: optionalText,\n};\nconst x = env.FLEET_OTHER;";
    expect(configVariables(source)).toEqual(['FLEET_NEW', 'FLEET_OTHER', 'PORT']);
  });
});

describe('the layout tables', () => {
  it('README.md § Layout names exactly the top-level folders (dot folders may be named; generated ones are not)', () => {
    const named = tableNames(section(read('README.md'), 'Layout')).filter((name) => name.endsWith('/'));
    const gone = named.filter((name) => !fs.existsSync(path.join(root, name)));
    expect(gone, 'folders the layout names that do not exist').toEqual([]);
    expect(foldersIn('').filter((name) => !named.includes(name)), 'folders the layout does not name').toEqual([]);
  });

  it("server/README.md § Code layout names exactly server/'s folders and the files at its top", () => {
    const layout = section(read('server/README.md'), 'Code layout');
    const named = tableNames(layout);
    const folders = named.filter((name) => name.endsWith('/'));
    const files = named.filter((name) => !name.endsWith('/'));
    expect(folders.length).toBeGreaterThan(10);
    const gone = named.filter((name) => !fs.existsSync(path.join(root, 'server', name)));
    expect(gone, 'names the server layout lists that do not exist in server/').toEqual([]);
    expect(foldersIn('server').filter((name) => !folders.includes(name)), 'server/ folders the layout does not name').toEqual([]);
    const sources = fs.readdirSync(path.join(root, 'server')).filter((name) => /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name));
    expect(sources.filter((name) => !files.includes(name)), 'files at the top of server/ the layout does not name').toEqual([]);
  });
});

describe('the links of the READMEs', () => {
  const files = readmes();
  const readFile = (file: string) => (fs.existsSync(path.join(root, file)) ? read(file) : undefined);

  it('are found: the root README and one beside each part of the product', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'build/README.md', 'renderer/README.md', 'reporter/README.md', 'server/README.md', 'test/README.md']));
    expect(files.reduce((count, file) => count + linkTargets(read(file)).length, 0)).toBeGreaterThan(50);
  });

  it('lead to files that exist, and to headings that exist', () => {
    expect(files.flatMap((file) => brokenLinks(file, read(file), readFile))).toEqual([]);
  });

  it('a link to a missing file or heading is reported', () => {
    const text = '[a](server/README.md#configuration) [b](server/README.md#no-such-heading) [c](no-such-file.md) `[d](ignored.md)`\n```\n[e](also-ignored.md)\n```\n[f](https://example.org/x)';
    expect(brokenLinks('README.md', text, readFile)).toEqual([
      'README.md: server/README.md#no-such-heading → no heading #no-such-heading in server/README.md',
      'README.md: no-such-file.md → no-such-file.md does not exist',
    ]);
  });

  it('anchors are GitHub\'s: punctuation dropped, spaces to hyphens, repeats numbered', () => {
    expect([...anchors('# A, b (c) and `d`\n## Usage reports: the ingestion endpoints\n## Tests\n## Tests\n```\n# not a heading\n```')]).toEqual([
      'a-b-c-and-d',
      'usage-reports-the-ingestion-endpoints',
      'tests',
      'tests-1',
    ]);
  });
});
