import { describe, expect, it } from 'vitest';
import { parseRoleMap } from '../config.js';
import { claimValues, mapRole, nextPath, uniqueUsername } from './roles.js';

const map = (text: string) => parseRoleMap(text)!;

describe('FLEET_OIDC_ROLE_MAP', () => {
  it('the highest role any value maps to wins', () => {
    expect(mapRole(['ops', 'admins', 'staff'], map('admins=administrator,ops=operator,*=viewer'))).toBe('administrator');
    expect(mapRole(['staff', 'ops'], map('admins=administrator,ops=operator,*=viewer'))).toBe('operator');
  });

  it('* applies only when no value matches', () => {
    expect(mapRole(['staff'], map('admins=administrator,*=viewer'))).toBe('viewer');
    expect(mapRole([], map('admins=administrator,*=operator'))).toBe('operator');
    expect(mapRole(['admins'], map('admins=viewer,*=administrator'))).toBe('viewer');
  });

  it('no match and no * refuses the sign-in', () => {
    expect(mapRole(['staff'], map('admins=administrator,ops=operator'))).toBeUndefined();
    expect(mapRole([], map('admins=administrator'))).toBeUndefined();
  });

  it('values are matched exactly, spaces around pairs ignored', () => {
    const m = map(' homefleet admins = administrator , Ops=operator');
    expect(mapRole(['homefleet admins'], m)).toBe('administrator');
    expect(mapRole(['ops'], m)).toBeUndefined();
  });

  it('refuses maps that are not value=role pairs', () => {
    for (const bad of ['', 'admins', 'admins=root', '=viewer', 'a=viewer,a=operator', '*=viewer,*=operator', 'a=viewer,,b=operator']) {
      expect(parseRoleMap(bad), bad).toBeUndefined();
    }
  });
});

describe('claim values', () => {
  it('reads a list, a single string, or a dotted path into nested claims', () => {
    expect(claimValues({ groups: ['a', 'b', 3] }, 'groups')).toEqual(['a', 'b']);
    expect(claimValues({ role: 'admins' }, 'role')).toEqual(['admins']);
    expect(claimValues({ realm_access: { roles: ['ops'] } }, 'realm_access.roles')).toEqual(['ops']);
    expect(claimValues({ 'https://example.org/roles': ['x'] }, 'https://example.org/roles')).toEqual(['x']);
    expect(claimValues({}, 'groups')).toEqual([]);
  });
});

describe('usernames from the provider', () => {
  it('takes preferred_username, cleans it, and makes it unique', () => {
    const taken = new Set(['alice', 'alice-2']);
    expect(uniqueUsername({ preferred_username: 'alice' }, (n) => taken.has(n))).toBe('alice-3');
    expect(uniqueUsername({ preferred_username: 'Bob Smith!' }, () => false)).toBe('Bob-Smith');
    expect(uniqueUsername({ email: 'carol@example.org' }, () => false)).toBe('carol');
    expect(uniqueUsername({ preferred_username: '¿?' }, () => false)).toBe('user');
  });
});

describe('next after single sign-on', () => {
  it('keeps paths on this origin and sends everything else to /', () => {
    expect(nextPath('/instances?state=testing#x')).toBe('/instances?state=testing#x');
    for (const bad of ['https://evil.example/', '//evil.example/', '/\\evil.example', '/\\/evil.example', 'javascript:alert(1)', '\t//evil.example', '/%0a', undefined, 42, ' /x']) {
      const kept = nextPath(bad);
      expect(kept === '/' || (kept.startsWith('/') && !kept.startsWith('//')), String(bad)).toBe(true);
      expect(new URL(kept, 'http://here.example').origin).toBe('http://here.example');
    }
    expect(nextPath('https://evil.example/')).toBe('/');
    expect(nextPath('//evil.example/')).toBe('/');
    expect(nextPath('/\\evil.example')).toBe('/');
  });
});
