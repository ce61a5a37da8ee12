import { describe, expect, it } from 'vitest';
import { collectionFilter, filterQuery, filterWords, parseTagText, parseView, toggleSort, viewQuery, visibleRange, withTag } from './query';

describe('the instances view in the URL', () => {
  it('round-trips every part of the view and leaves defaults out', () => {
    const view = parseView('?search=web&state=testing&stack=production&sort=vmid&order=desc');
    expect(view).toEqual({ search: 'web', state: 'testing', stack: 'production', host: '', tags: [], sort: 'vmid', order: 'desc', at: '' });
    expect(viewQuery(view)).toBe('?search=web&state=testing&stack=production&sort=vmid&order=desc');
    expect(viewQuery(parseView(''))).toBe('');
  });
  it('falls back like the API: an unknown sort is name, anything but desc is ascending', () => {
    expect(parseView('?sort=evil&order=sideways')).toMatchObject({ sort: 'name', order: 'asc' });
  });
  it('an unknown state or stack is "all" (the filter would otherwise show a blank choice)', () => {
    expect(parseView('?state=bogus&stack=staging&search=web')).toMatchObject({ state: '', stack: '', search: 'web' });
    expect(viewQuery(parseView('?state=bogus'))).toBe('');
  });
  it('keeps a host filter: an id or none (instances no host reports); anything else is all', () => {
    expect(parseView('?host_id=none')).toMatchObject({ host: 'none' });
    expect(viewQuery(parseView('?host_id=7&sort=vmid'))).toBe('?host_id=7&sort=vmid');
    expect(parseView('?host_id=7;drop')).toMatchObject({ host: '' });
  });
  it('keeps an "as of" instant in UTC; anything else is now', () => {
    expect(viewQuery(parseView('?state=testing&at=2026-11-22T10:15:00Z'))).toBe('?state=testing&at=2026-11-22T10%3A15%3A00Z');
    expect(parseView('?at=yesterday')).toMatchObject({ at: '' });
  });
  it('keeps a tag filter as repeated tag parameters, tidied; a tag that cannot be one is dropped', () => {
    const view = parseView('?tag=Web&tag=edge&tag=web&tag=bad%20tag');
    expect(view.tags).toEqual(['edge', 'web']);
    expect(viewQuery(view)).toBe('?tag=edge&tag=web');
    expect(withTag(view, 'db').tags).toEqual(['db', 'edge', 'web']);
    expect(withTag(view, 'web')).toBe(view);
  });
  it('clicking the sorted column flips the order; another column sorts ascending', () => {
    const byName = parseView('');
    expect(toggleSort(byName, 'name')).toMatchObject({ sort: 'name', order: 'desc' });
    expect(toggleSort({ ...byName, order: 'desc' }, 'vmid')).toMatchObject({ sort: 'vmid', order: 'asc' });
  });
});

describe('visibleRange', () => {
  it('covers the viewport plus overscan and never leaves the list', () => {
    expect(visibleRange(0, 440, 44, 10_000, 5)).toEqual({ first: 0, last: 15 });
    expect(visibleRange(44 * 1000, 440, 44, 10_000, 5)).toEqual({ first: 995, last: 1015 });
    expect(visibleRange(44 * 9_999, 440, 44, 10_000, 5)).toEqual({ first: 9994, last: 10_000 });
    expect(visibleRange(0, 440, 44, 3, 5)).toEqual({ first: 0, last: 3 });
  });
});

describe('tags typed into a box', () => {
  it('splits on commas and spaces, lower-cases, dedupes and sorts, and names what cannot be a tag', () => {
    expect(parseTagText(' Web, db  web,,edge ')).toEqual({ tags: ['db', 'edge', 'web'], invalid: [] });
    expect(parseTagText('ok -bad')).toEqual({ tags: ['-bad', 'ok'], invalid: ['-bad'] });
    expect(parseTagText('')).toEqual({ tags: [], invalid: [] });
  });
});

describe('collections from the instances view', () => {
  it('saves only the filters that are set, and opens a filter as the instances view it was saved from', () => {
    const view = parseView('?search=%20web%20&state=deployed&host_id=none&tag=edge&sort=vmid');
    const filter = collectionFilter(view);
    expect(filter).toEqual({ search: 'web', state: 'deployed', host_id: 'none', tags: ['edge'] });
    expect(filterQuery(filter)).toBe('?search=web&state=deployed&host_id=none&tag=edge');
    expect(collectionFilter(parseView('?host_id=7'))).toEqual({ host_id: 7 });
    expect(collectionFilter(parseView(''))).toEqual({});
  });
  it('says a filter in words', () => {
    expect(filterWords({ tags: ['web', 'edge'], state: 'deployed' })).toBe('tags web, edge · state deployed');
    expect(filterWords({ host_id: 'none', guest_status: 'running' })).toBe('on no host · guest running');
    expect(filterWords({})).toBe('every instance');
  });
});
