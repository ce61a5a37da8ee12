import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** A request through node:http, for headers fetch will not send as given (Host) and proxy headers. */
export function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<RawResponse> {
  const url = new URL(path, baseUrl);
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } },
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
