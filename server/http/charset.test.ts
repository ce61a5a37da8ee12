import { describe, expect, it } from 'vitest';
import { charsetRefusal, parseMediaType } from './charset.js';

describe('charsetRefusal', () => {
  it.each([
    [undefined],
    [''],
    ['application/json'],
    ['application/json; charset=utf-8'],
    ['Application/JSON; Charset="UTF-8"'],
    ['application/json;charset=utf-8;;'],
    ['application/json ; charset=utf-8 ; foo="a;b\\"c"'],
    ['application/x-www-form-urlencoded; charset=ISO-8859-1'],
    ['application/x-www-form-urlencoded; charset=utf-8'],
    ['text/plain;charset=UTF-8'],
    ['multipart/form-data; boundary=----x'],
  ])('lets %j through', (header) => {
    expect(charsetRefusal(header)).toBeUndefined();
  });

  it.each([
    ['application/json; charset=utf-7', 'unsupported charset: a request body must be UTF-8'],
    ['application/json; charset=UTF-7-IMAP', 'unsupported charset: a request body must be UTF-8'],
    ['application/json; charset=utf-16le', 'unsupported charset: a request body must be UTF-8'],
    ['application/json; charset=utf8', 'unsupported charset: a request body must be UTF-8'],
    ['application/json; charset=iso-8859-1', 'unsupported charset: a request body must be UTF-8'],
    ['text/plain; charset=us-ascii', 'unsupported charset: a request body must be UTF-8'],
    ['application/x-www-form-urlencoded; charset=utf-7', 'unsupported charset: a form must be UTF-8 or ISO-8859-1'],
    ['application/x-www-form-urlencoded; charset=latin1', 'unsupported charset: a form must be UTF-8 or ISO-8859-1'],
    ['application/json; charset="utf\\-7"', 'unsupported charset: a request body must be UTF-8'],
    ['application/json; charset=utf-8; charset=utf-7', 'malformed Content-Type header: more than one charset'],
    ['application/json; charset=utf-7; CHARSET=utf-8', 'malformed Content-Type header: more than one charset'],
    ['application/json; charset=', 'malformed Content-Type header'],
    ['application/json; charset', 'malformed Content-Type header'],
    ['application/json; charset="utf-8', 'malformed Content-Type header'],
    ['application/json; charset = utf-8', 'malformed Content-Type header'],
    ['application/json; charset=utf-8 x', 'malformed Content-Type header'],
    ['application/json, text/plain; charset=utf-8', 'malformed Content-Type header'],
    ['json; charset=utf-8', 'malformed Content-Type header'],
    ['application/json charset=utf-8', 'malformed Content-Type header'],
  ])('refuses %j: %s', (header, reason) => {
    expect(charsetRefusal(header)).toBe(reason);
  });

  it('reads a long header in linear time', () => {
    const started = performance.now();
    expect(charsetRefusal(`application/json${' ;'.repeat(4000)}${' '.repeat(4000)}x`)).toBe('malformed Content-Type header');
    expect(charsetRefusal(`application/json; a="${'\\"'.repeat(4000)}; charset=utf-7`)).toBe('malformed Content-Type header');
    expect(performance.now() - started).toBeLessThan(100);
  });
});

describe('parseMediaType', () => {
  it('lowers the type and the parameter names, unquotes values and keeps their order', () => {
    expect(parseMediaType('Text/HTML; A=1; b="x\\"y z";c=Q')).toEqual({ type: 'text/html', parameters: [['a', '1'], ['b', 'x"y z'], ['c', 'Q']] });
  });
});
