import { describe, expect, it } from 'vitest';
import { expandHostPattern } from './host-pattern.js';
import { parseIniInventory } from './inventory-ini.js';
import { parseYamlInventory } from './inventory-yaml.js';
import { createNameMatcher } from './matcher.js';

describe('expandHostPattern', () => {
  it('expands a numeric range keeping leading zeros', () => {
    expect(expandHostPattern('web[01:03]')).toEqual(['web01', 'web02', 'web03']);
    expect(expandHostPattern('node[8:11].lan')).toEqual(['node8', 'node9', 'node10', 'node11'].map((n) => `${n}.lan`));
  });

  it('expands a letter range, a step and several ranges in one name', () => {
    expect(expandHostPattern('db-[a:c]')).toEqual(['db-a', 'db-b', 'db-c']);
    expect(expandHostPattern('h[1:7:3]')).toEqual(['h1', 'h4', 'h7']);
    expect(expandHostPattern('r[1:2]-[a:b]')).toEqual(['r1-a', 'r1-b', 'r2-a', 'r2-b']);
  });

  it('keeps a name without a valid range as written', () => {
    expect(expandHostPattern('plain')).toEqual(['plain']);
    expect(expandHostPattern('bad[3:1]')).toEqual(['bad[3:1]']);
    expect(expandHostPattern('mixed[1:c]')).toEqual(['mixed[1:c]']);
  });
});

describe('parseIniInventory', () => {
  it('lists hosts of plain sections and ungrouped hosts, not vars or children, without comments', () => {
    const ini = [
      '# a comment line',
      '; another comment',
      'loose-host',
      '[web]',
      'web[01:03] ansible_user=deploy',
      'proxy ansible_host=10.0.0.5 # inline comment',
      '',
      '[db:vars]',
      'ansible_port=5432',
      'not_a_host',
      '[all:children]',
      'web',
      'db',
      '[db]',
      'db-[a:b].example.com:2222',
      '  indented-host  ',
    ].join('\n');
    expect(parseIniInventory(ini)).toEqual([
      'loose-host',
      'web01',
      'web02',
      'web03',
      'proxy',
      'db-a.example.com',
      'db-b.example.com',
      'indented-host',
    ]);
  });

  it('reads CRLF line ends and lists a host named in two groups once', () => {
    expect(parseIniInventory('[a]\r\nsame\r\n[b]\r\nsame\r\nother\r\n')).toEqual(['same', 'other']);
  });

  it('gives no hosts for an empty inventory', () => {
    expect(parseIniInventory('')).toEqual([]);
    expect(parseIniInventory('# nothing\n[empty]\n')).toEqual([]);
  });
});

describe('parseYamlInventory', () => {
  it('collects hosts of every group and its children, expanding ranges', async () => {
    const yaml = `
all:
  hosts:
    mail.example.com:
  vars:
    ansible_user: deploy
  children:
    webservers:
      hosts:
        web[01:02]:
          http_port: 80
    dbservers:
      children:
        primary:
          hosts:
            db-a: { ansible_host: 10.0.0.9 }
ungrouped:
  hosts:
    lonely:
`;
    expect(await parseYamlInventory(yaml)).toEqual(['mail.example.com', 'web01', 'web02', 'db-a', 'lonely']);
  });

  it('fails with a clear message on text that is not YAML or not an inventory', async () => {
    await expect(parseYamlInventory('all: [unclosed')).rejects.toThrow(/^inventory is not valid YAML/);
    await expect(parseYamlInventory('- just\n- a list\n')).rejects.toThrow('inventory YAML is not a mapping of groups');
  });

  it('gives no hosts for an empty document', async () => {
    expect(await parseYamlInventory('')).toEqual([]);
  });
});

describe('createNameMatcher', () => {
  it('matches instance names case-insensitively on the whole name or the first label', () => {
    const matches = createNameMatcher(['Web01.lan', 'DB', null, '', 'mail.example.com']);
    expect(matches('web01')).toBe(true);
    expect(matches('WEB01.LAN')).toBe(true);
    expect(matches('db')).toBe(true);
    expect(matches('mail')).toBe(true);
    expect(matches('web02')).toBe(false);
    expect(matches('lan')).toBe(false);
    expect(matches('example')).toBe(false);
  });
});
