import http from 'node:http';
import https from 'node:https';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/**
 * A request through node:http (node:https for an https:// base, trusting only `ca`), for headers
 * fetch will not send as given (Host) and proxy headers. The certificate is checked against the
 * URL's host, not the Host header sent.
 */
export function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown, tls: { ca?: string } = {}): Promise<RawResponse> {
  const url = new URL(path, baseUrl);
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      { method, headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, ...(tls.ca ? { ca: tls.ca, checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(url.hostname.replace(/^\[|\]$/g, ''), cert) } : {}) },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: unknown = text;
          if (res.headers['content-type']?.includes('application/json') && text) parsed = JSON.parse(text);
          resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.end(payload);
  });
}
