import { describe, expect, it } from 'vitest';
import { scrubSecrets } from './schema.js';

describe('scrubSecrets', () => {
  it('replaces a stored secret in every form it may take in an error text', () => {
    const config = { api_token: 'key-id:the-secret-part', api_key: ' tskey-api-abcdef\nline-two ' };
    const base64 = Buffer.from('key-id:the-secret-part').toString('base64');
    const text = [
      'Headers.append: "Basic key-id:the-secret-part" is an invalid header value.',
      `sent Basic ${base64}`,
      `url ?t=${encodeURIComponent('key-id:the-secret-part')}`,
      'quoted "tskey-api-abcdef\\nline-two"',
      'split tskey-api-abcdef / line-two',
    ].join(' | ');
    const scrubbed = scrubSecrets(text, config);
    expect(scrubbed).not.toMatch(/the-secret-part|tskey-api-abcdef|line-two/);
    expect(scrubbed).not.toContain(base64);
    expect(scrubbed).toContain('**REDACTED**');
  });

  it('leaves a text without secrets alone, and a short secret only where it stands alone', () => {
    expect(scrubSecrets('PatchMon answered HTTP 401 Unauthorized', { api_token: 'long-enough-token' })).toBe('PatchMon answered HTTP 401 Unauthorized');
    expect(scrubSecrets('the token t was refused', { api_token: 't' })).toBe('the token **REDACTED** was refused');
    expect(scrubSecrets('anything', {})).toBe('anything');
  });
});
