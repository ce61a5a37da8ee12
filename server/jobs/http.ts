import type { ZodType } from 'zod';

/** What a job handler may ask of the network: one JSON GET, errors as plain messages without secrets. */
export interface HttpClient {
  getJson(url: string, request: { service: string; headers: Record<string, string> }): Promise<unknown>;
}

export interface HttpClientOptions {
  /** Remote calls give up after this long (PRODUCT.md: 30 s). */
  timeoutMs?: number;
  /** Aborts every call in flight, for shutdown. */
  signal?: AbortSignal;
}

/** The real client: global fetch with a timeout. Messages name the service and status, never headers. */
export function createHttpClient({ timeoutMs = 30_000, signal }: HttpClientOptions = {}): HttpClient {
  return {
    async getJson(url, { service, headers }) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const abort = signal ? AbortSignal.any([timeout, signal]) : timeout;
      let text: string;
      try {
        const res = await fetch(url, { headers: { accept: 'application/json', ...headers }, signal: abort, redirect: 'error' });
        if (!res.ok) {
          void res.body?.cancel().catch(() => undefined);
          throw new Error(`${service} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
        }
        text = await res.text();
      } catch (err) {
        if (timeout.aborted) throw new Error(`${service} did not answer within ${formatSeconds(timeoutMs)}`);
        if (signal?.aborted) throw new Error(`${service} request cancelled: the server is shutting down`);
        if (err instanceof Error && err.message.startsWith(`${service} answered`)) throw err;
        throw new Error(`could not reach ${service} at ${originOf(url)}: ${causeOf(err)}`);
      }
      try {
        return JSON.parse(text);
      } catch {
        throw new Error(`${service} answered with a body that is not JSON`);
      }
    },
  };
}

/** Checks a remote answer's shape; a mismatch fails the run before anything changes. */
export function expectShape<T>(schema: ZodType<T>, value: unknown, service: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.length ? issue.path.join('.') : 'body';
  throw new Error(`${service} answered with an unexpected shape (${where}: ${issue.message})`);
}

function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an invalid URL';
  }
}

function causeOf(err: unknown): string {
  // fetch quotes a rejected header value whole, and headers carry the secret: never pass that text on.
  if (err instanceof TypeError && /header/i.test(err.message)) return 'a request header is invalid (check the secret for line breaks or other control characters)';
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
