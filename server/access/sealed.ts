import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../time.js';

/**
 * Short-lived sign-in state carried by the browser instead of kept by the server: an OpenID Connect
 * flow (state, nonce, PKCE verifier, next) or a WebAuthn challenge, in an HttpOnly cookie signed with
 * HMAC-SHA-256. Nothing is stored per anonymous request, so a flood of them cannot push a person's
 * sign-in out of a bounded store (issue 34), and the cookie binds the state to the browser that
 * started it.
 *
 * The key lives as long as the process: a restart ends sign-ins in progress, as the in-memory stores
 * did, and no key sits at rest beside the database to be copied with it. The kind is signed with the
 * value, so one kind of cookie cannot stand in for another; the expiry is signed too, whatever the
 * cookie's Max-Age says.
 */
export function createSealer(clock: Clock, key: Buffer = randomBytes(32)) {
  const mac = (kind: string, body: string) => createHmac('sha256', key).update(`${kind}.${body}`).digest();

  return {
    seal(kind: string, value: unknown, ttlMs: number): string {
      const body = Buffer.from(JSON.stringify({ e: clock.now() + ttlMs, v: value })).toString('base64url');
      return `${body}.${mac(kind, body).toString('base64url')}`;
    },

    /** The value sealed under `kind`, or undefined when the text is not one this process sealed, or has expired. */
    open<T>(kind: string, sealed: string | undefined): T | undefined {
      const dot = sealed?.indexOf('.') ?? -1;
      if (!sealed || dot < 1) return undefined;
      const body = sealed.slice(0, dot);
      const given = Buffer.from(sealed.slice(dot + 1), 'base64url');
      const expected = mac(kind, body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      try {
        const { e, v } = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { e: unknown; v: T };
        return typeof e === 'number' && e > clock.now() ? v : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

export type Sealer = ReturnType<typeof createSealer>;
