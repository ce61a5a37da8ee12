/**
 * Whether `url` belongs to the desktop app's own server. Only the exact origin the window was
 * opened on counts: no other port, scheme, host spelling or IP form, no credentials, and only
 * http(s) documents (a blob: or view-source: URL can carry our origin too).
 */
export function isInternalUrl(url: string, serverOrigin: string): boolean {
  let target: URL;
  let server: URL;
  try {
    target = new URL(url);
    server = new URL(serverOrigin);
  } catch {
    return false;
  }
  if (server.protocol !== 'http:' && server.protocol !== 'https:') return false;
  // `http://127.0.0.1:PORT@evil.example` puts our origin in the userinfo; refuse any userinfo at all.
  if (target.username !== '' || target.password !== '') return false;
  return target.protocol === server.protocol && target.origin === server.origin;
}
