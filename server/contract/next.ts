/** Where a sign-in may send the browser afterwards: the one rule the server (single sign-on) and the sign-in page share. */

const BASE = 'http://homefleet.invalid';

/**
 * `next` as a path on this origin, or undefined when it is not one ("a same-origin path only").
 * The text is resolved as a browser would (dot segments, %2e, backslashes, tabs and newlines), and
 * the result is what is checked and what is returned: `/.//evil.example` resolves to the path
 * `//evil.example`, which a browser reads as another host, so checking the raw text is not enough.
 */
export function sameOriginPath(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 2000 || !raw.startsWith('/')) return undefined;
  let url: URL;
  try {
    url = new URL(raw, BASE);
  } catch {
    return undefined;
  }
  if (url.origin !== BASE || !url.pathname.startsWith('/') || url.pathname.startsWith('//') || url.pathname.startsWith('/\\')) return undefined;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // What is returned must mean the same wherever it lands: read again, it is the same path on the same origin.
  let again: URL;
  try {
    again = new URL(path, BASE);
  } catch {
    return undefined;
  }
  return again.origin === BASE && `${again.pathname}${again.search}${again.hash}` === path ? path : undefined;
}
