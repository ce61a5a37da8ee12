/** A shell block of a README walkthrough, with what the `<!-- <tag>: … -->` line before it says: `run`, `the reader sets`, …. */
export interface ShellBlock {
  marker: string | undefined;
  code: string;
}

/**
 * The ```sh blocks of a markdown section `## title` (up to the next heading of its level or higher),
 * each with the marker of the `<!-- tag: … -->` comment just before it; a fence of another language is
 * a block marked `not sh`, so a walkthrough cannot hide a step in one.
 */
export function shellBlocks(markdown: string, title: string, tag: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(`## ${title}`);
  if (start < 0) return [];
  const comment = new RegExp(`^<!-- ${tag}: (.+) -->$`);
  const blocks: ShellBlock[] = [];
  let fence: string[] | undefined;
  let marker: string | undefined;
  for (const line of lines.slice(start + 1)) {
    if (fence) {
      if (/^```\s*$/.test(line)) {
        blocks.push({ marker, code: fence.join('\n') + '\n' });
        fence = undefined;
        marker = undefined;
      } else fence.push(line);
    } else if (/^#{1,2} /.test(line)) break;
    else if (/^```sh\s*$/.test(line)) fence = [];
    else if (/^```/.test(line)) blocks.push({ marker: 'not sh', code: line });
    else if (line.trim() !== '') marker = comment.exec(line)?.[1];
  }
  return blocks;
}
