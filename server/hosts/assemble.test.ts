import { describe, expect, it } from 'vitest';
import { assembleScript, includedFiles } from './assemble.js';

const script = [
  '#!/usr/bin/env bash',
  '# shellcheck source=reporter/lib/common.sh',
  'source "${BASH_SOURCE[0]%/*}/lib/common.sh" # homefleet:include',
  'echo "source \\"${BASH_SOURCE[0]%/*}/lib/other.sh\\" # homefleet:include"',
  '  source "${BASH_SOURCE[0]%/*}/lib/indented.sh" # homefleet:include',
  'main',
  '',
].join('\n');

describe('assembleScript', () => {
  it('replaces each whole include line with the file it names, and nothing else', () => {
    const read = (file: string) => ({ 'lib/common.sh': 'helper() { :; }\n# $& and $1 stay as written\n' })[file] ?? '';
    expect(includedFiles(script)).toEqual(['lib/common.sh']);
    expect(assembleScript(script, read)).toBe(
      [
        '#!/usr/bin/env bash',
        '# shellcheck source=reporter/lib/common.sh',
        'helper() { :; }',
        '# $& and $1 stay as written',
        'echo "source \\"${BASH_SOURCE[0]%/*}/lib/other.sh\\" # homefleet:include"',
        '  source "${BASH_SOURCE[0]%/*}/lib/indented.sh" # homefleet:include',
        'main',
        '',
      ].join('\n'),
    );
  });

  it('fails when an included file cannot be read, rather than serving a script that cannot run alone', () => {
    expect(() =>
      assembleScript(script, () => {
        throw new Error('ENOENT');
      }),
    ).toThrow('ENOENT');
  });
});
