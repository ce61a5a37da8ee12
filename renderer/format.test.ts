import { describe, expect, it } from 'vitest';
import { duration, exactTime, historyChange, historyValue, interval, plural, relativeTime, sentence, uptime } from './format';

const NOW = Date.parse('2026-11-22T10:15:00Z');

describe('relativeTime', () => {
  it('says "just now" within 45 seconds either way', () => {
    expect(relativeTime('2026-11-22T10:14:20Z', NOW)).toBe('just now');
    expect(relativeTime('2026-11-22T10:15:30Z', NOW)).toBe('just now');
  });
  it('counts minutes, hours, days and years, past and future', () => {
    expect(relativeTime('2026-11-22T10:10:00Z', NOW)).toBe('5 minutes ago');
    expect(relativeTime('2026-11-22T07:15:00Z', NOW)).toBe('3 hours ago');
    expect(relativeTime('2026-11-20T10:15:00Z', NOW)).toBe('2 days ago');
    expect(relativeTime('2024-11-22T10:15:00Z', NOW)).toBe('2 years ago');
    expect(relativeTime('2026-11-22T12:15:00Z', NOW)).toBe('in 2 hours');
  });
  it('says "never" for a missing time and passes through what it cannot read', () => {
    expect(relativeTime(null, NOW)).toBe('never');
    expect(relativeTime('yesterday', NOW)).toBe('yesterday');
  });
});

describe('exactTime', () => {
  it('shows the stored UTC time, keeping milliseconds when stored', () => {
    expect(exactTime('2026-11-22T10:15:00Z')).toBe('2026-11-22 10:15:00 UTC');
    expect(exactTime('2026-11-22T10:15:00.123Z')).toBe('2026-11-22 10:15:00.123 UTC');
    expect(exactTime(null)).toBe('—');
  });
});

describe('duration, historyValue, plural', () => {
  it('reads a run length, or "running" without an end', () => {
    expect(duration('2026-11-22T10:15:00.000Z', '2026-11-22T10:15:00.250Z')).toBe('250 ms');
    expect(duration('2026-11-22T10:15:00.000Z', '2026-11-22T10:15:02.500Z')).toBe('2.5 s');
    expect(duration('2026-11-22T10:15:00.000Z', null)).toBe('running');
  });
  it('shows null and empty history values distinctly', () => {
    expect(historyValue(null)).toBe('—');
    expect(historyValue('')).toBe('(empty)');
    expect(historyValue('testing')).toBe('testing');
  });
  it('pluralises with thousands separators', () => {
    expect(plural(1, 'instance')).toBe('1 instance');
    expect(plural(10000, 'instance')).toBe('10,000 instances');
  });
});

describe('sentence', () => {
  it('capitalises a server message and ends it with a full stop', () => {
    expect(sentence('vmid already exists')).toBe('VMID already exists.');
    expect(sentence('job already running.')).toBe('Job already running.');
  });
  it('keeps a first word that names something in code as written', () => {
    expect(sentence('tailscale_sync is not configured: set api_key')).toBe('tailscale_sync is not configured: set api_key.');
    expect(sentence('api_url: must be an http(s) URL')).toBe('api_url: must be an http(s) URL.');
  });
});

describe('historyChange', () => {
  it('shows a flag by its name and on/off', () => {
    expect(historyChange('argus', '0', '1')).toEqual({ label: 'Argus', from: 'off', to: 'on' });
    expect(historyChange('hardware_acceleration', '1', '0')).toEqual({ label: 'Hardware acceleration', from: 'on', to: 'off' });
    expect(historyChange('patchmon', null, '1')).toEqual({ label: 'PatchMon', from: '—', to: 'on' });
  });
  it('shows other fields by their label with the stored values', () => {
    expect(historyChange('state', 'deployed', 'testing')).toEqual({ label: 'State', from: 'deployed', to: 'testing' });
    expect(historyChange('tailscale_ip', '', '100.64.0.1')).toEqual({ label: 'Tailscale IP', from: '(empty)', to: '100.64.0.1' });
  });
});

describe('uptime', () => {
  it('says minutes under an hour, hours and minutes under a day, then days and hours', () => {
    expect(uptime(22 * 60 + 5)).toBe('22 min');
    expect(uptime(30)).toBe('0 min');
    expect(uptime(5 * 3600 + 3 * 60)).toBe('5 h 3 min');
    expect(uptime(3 * 86400 + 4 * 3600 + 59 * 60)).toBe('3 d 4 h');
  });
});


describe('interval', () => {
  it('says seconds, or whole minutes', () => {
    expect([10, 30, 60, 90, 3600].map(interval)).toEqual(['10 s', '30 s', '1 min', '90 s', '60 min']);
  });
});

describe('historyChange of tags', () => {
  it('shows the comma-joined lists as lists, and no tags as none', () => {
    expect(historyChange('tags', '', 'db,web')).toEqual({ label: 'Tags', from: 'none', to: 'db, web' });
  });
});
