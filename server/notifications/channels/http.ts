import { DeliveryError, type SendOptions } from './types.js';

const CONNECT_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name could not be resolved',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate not trusted (self-signed)',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate not trusted (self-signed)',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host',
};

/**
 * POSTs to a channel's URL: bounded by the timeout, no redirect followed (a redirect would carry the
 * body somewhere the channel did not name), and every failure said without the URL or any header.
 */
export async function post(url: string, init: { headers: Record<string, string>; body: string }, options: SendOptions): Promise<void> {
  const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: init.headers, body: init.body, redirect: 'manual', signal: AbortSignal.any(signals) });
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') throw new DeliveryError(`no answer within ${Math.round(options.timeoutMs / 1000)} s`);
    // fetch refuses ports browsers block (1, 25, 6000, ...) before any connection.
    if ((e.cause as { message?: string } | undefined)?.message === 'bad port') throw new DeliveryError('this port is not allowed for HTTP');
    const code = e.cause?.code;
    throw new DeliveryError(code && CONNECT_ERRORS[code] ? CONNECT_ERRORS[code] : `could not connect${code && /^[A-Z_]{2,40}$/.test(code) ? ` (${code})` : ''}`);
  }
  // The body is not read into the error: a receiver may echo what it was sent.
  await res.body?.cancel().catch(() => undefined);
  if (res.status < 200 || res.status > 299) throw new DeliveryError(`the receiver answered HTTP ${res.status}`);
}

/** A header value as RFC 2047 when it is not plain ASCII (ntfy reads that form); control characters dropped. */
export function headerText(value: string): string {
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, ' ');
  return /^[\x20-\x7e]*$/.test(clean) ? clean : `=?UTF-8?B?${Buffer.from(clean, 'utf8').toString('base64')}?=`;
}
