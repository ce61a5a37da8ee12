import { describe, expect, it } from 'vitest';
import { isConfigured, missingFields, notConfiguredText, secretsToRetype } from './jobConfig';

describe('missingFields', () => {
  it('names the unset fields each handler requires, from the redacted config', () => {
    expect(missingFields({ key: 'tailscale_sync', config: {} })).toEqual(['api_key']);
    expect(missingFields({ key: 'tailscale_sync', config: { api_key: '**REDACTED**' } })).toEqual([]);
    expect(missingFields({ key: 'patchmon_sync', config: { api_url: '  ' } })).toEqual(['api_url', 'api_token']);
    expect(missingFields({ key: 'patchmon_sync', config: { api_url: 'http://x', api_token: '**REDACTED**' } })).toEqual([]);
    expect(missingFields({ key: 'semaphore_sync', config: { api_token: '**REDACTED**', run_on_create: true } })).toEqual(['api_url']);
  });

  it('prefers what the server says', () => {
    expect(missingFields({ key: 'semaphore_sync', config: {}, configured: false, missing: ['api_url'] })).toEqual(['api_url']);
    expect(missingFields({ key: 'semaphore_sync', config: {}, configured: true, missing: [] })).toEqual([]);
    expect(isConfigured({ key: 'semaphore_sync', config: {}, configured: true })).toBe(true);
    expect(isConfigured({ key: 'tailscale_sync', config: { api_key: '**REDACTED**' }, configured: false, missing: [] })).toBe(false);
  });
});

describe('notConfiguredText', () => {
  it('keeps the job key as written and says what to set', () => {
    expect(notConfiguredText({ key: 'patchmon_sync', config: {} })).toBe('patchmon_sync is not configured: set api_url and api_token');
    expect(notConfiguredText({ key: 'tailscale_sync', config: {} })).toBe('tailscale_sync is not configured: set api_key');
  });
});

describe('secretsToRetype', () => {
  const patchmon = { key: 'patchmon_sync', config: { api_url: 'http://pm.lan/hosts', api_token: '**REDACTED**' } };
  it('names a stored secret left empty once the URL differs from the stored one', () => {
    expect(secretsToRetype(patchmon, { api_url: 'http://pm.lan/hosts', api_token: '' })).toEqual([]);
    expect(secretsToRetype(patchmon, { api_url: 'http://listener.example/hosts', api_token: '' })).toEqual(['api_token']);
    expect(secretsToRetype(patchmon, { api_url: 'http://listener.example/hosts', api_token: 'typed' })).toEqual([]);
    expect(secretsToRetype(patchmon, { api_url: '', api_token: '' })).toEqual([]);
  });
  it("Tailscale's empty URL is its default address, a destination like any other", () => {
    const tailscale = { key: 'tailscale_sync', config: { api_key: '**REDACTED**', api_url: 'http://ts.lan' } };
    expect(secretsToRetype(tailscale, { api_url: '', api_key: '' })).toEqual(['api_key']);
    expect(secretsToRetype({ key: 'tailscale_sync', config: { api_key: '**REDACTED**' } }, { api_url: 'http://ts.lan', api_key: '' })).toEqual(['api_key']);
    expect(secretsToRetype({ key: 'tailscale_sync', config: {} }, { api_url: 'http://ts.lan', api_key: '' })).toEqual([]);
  });
});
