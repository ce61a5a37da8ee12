/** A form may also be ISO-8859-1, what a browser sends from a page in that charset. */
const FORM_TYPE = 'application/x-www-form-urlencoded';

// RFC 9110 §8.3.1 and §5.6: media-type = type "/" subtype *( OWS ";" OWS [ name "=" ( token / quoted-string ) ] ).
// Sticky expressions applied one after another, so a long header costs linear time.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const TYPE = new RegExp(`[ \\t]*(${TOKEN}/${TOKEN})`, 'y');
const SEPARATOR = /[ \t]*;[ \t]*/y;
const PARAMETER = new RegExp(`(${TOKEN})=(${TOKEN}|"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t \\x20-\\x7e\\x80-\\xff])*")`, 'y');
const END = /[ \t]*$/y;

interface MediaType {
  type: string;
  /** Names in lower case, values unquoted, in the order given. */
  parameters: Array<[string, string]>;
}

/** A Content-Type value as RFC 9110 writes it, or undefined when it is not one. */
export function parseMediaType(header: string): MediaType | undefined {
  const at = (re: RegExp, index: number) => ((re.lastIndex = index), re.exec(header));
  const type = at(TYPE, 0);
  if (!type) return undefined;
  const parameters: Array<[string, string]> = [];
  let index = TYPE.lastIndex;
  while (!at(END, index)) {
    if (!at(SEPARATOR, index)) return undefined;
    index = SEPARATOR.lastIndex;
    const parameter = at(PARAMETER, index);
    if (parameter) {
      const value = parameter[2]!.startsWith('"') ? parameter[2]!.slice(1, -1).replace(/\\(.)/g, '$1') : parameter[2]!;
      parameters.push([parameter[1]!.toLowerCase(), value]);
      index = PARAMETER.lastIndex;
    }
  }
  return { type: type[1]!.toLowerCase(), parameters };
}

/**
 * Why a request body of this Content-Type is refused (415) before a byte of it is read, or undefined
 * when the body may be read. "JSON text exchanged between systems that are not part of a closed
 * ecosystem MUST be encoded using UTF-8" (RFC 8259 §8.1); forms are UTF-8 or ISO-8859-1. Every other
 * charset is refused, whatever the media type, and so is a header that does not parse: the body
 * parser reads the header its own, more lenient way, so only a header both read alike gets to it.
 */
export function charsetRefusal(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const media = parseMediaType(contentType);
  if (!media) return 'malformed Content-Type header';
  const charsets = media.parameters.filter(([name]) => name === 'charset');
  if (charsets.length === 0) return undefined;
  if (charsets.length > 1) return 'malformed Content-Type header: more than one charset';
  const charset = charsets[0]![1].toLowerCase();
  if (charset === 'utf-8') return undefined;
  if (media.type === FORM_TYPE) return charset === 'iso-8859-1' ? undefined : 'unsupported charset: a form must be UTF-8 or ISO-8859-1';
  return 'unsupported charset: a request body must be UTF-8';
}
