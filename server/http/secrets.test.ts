import { describe, expect, it } from 'vitest';
import { bearerCredential } from './secrets.js';

describe('bearerCredential: one reading of Authorization for every kind of token', () => {
  it.each([
    ['Bearer hfp_abc', 'hfp_abc'],
    ['bearer hfh_abc', 'hfh_abc'],
    ['Bearer \t hfe_abc', 'hfe_abc'],
    ['Bearer', ''],
    ['Bearer ', ''],
    // What follows the scheme is taken whole: a value with a space is no valid token anywhere.
    ['Bearer hfh_abc extra', 'hfh_abc extra'],
  ])('%j gives %j', (header, credential) => {
    expect(bearerCredential(header)).toBe(credential);
  });

  it.each([[undefined], [''], ['Basic dXNlcjpwYXNz'], ['Bearerhfp_abc'], ['Token hfp_abc']])('%j is no bearer credential', (header) => {
    expect(bearerCredential(header)).toBeUndefined();
  });
});
