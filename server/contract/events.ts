import type { Capability } from './access.js';

/**
 * One live event: who may receive it, and (`detail`) what a role without the detail capability gets
 * instead. `P` is the payload as sent, `S` what the summary holds. Declared once, in the contract
 * file of the feature that sends it; the stream's filter, the hub and the dashboard's types all
 * come from these declarations.
 */
export interface LiveEventSpec<P, S = P> {
  capability: Capability;
  detail?: { capability: Capability; summarize: (payload: P) => S };
  /** Type only: never set. */
  readonly payload?: P;
  readonly summary?: S;
}

export function liveEvent<P>(capability: Capability): LiveEventSpec<P>;
export function liveEvent<P, S>(capability: Capability, detail: { capability: Capability; summarize: (payload: P) => S }): LiveEventSpec<P, S>;
export function liveEvent<P, S>(capability: Capability, detail?: { capability: Capability; summarize: (payload: P) => S }): LiveEventSpec<P, S> {
  return detail ? { capability, detail } : { capability };
}

/**
 * What the stream sends besides the catalogue's events: `reset` (missed events are gone: reload what
 * is shown) and `revoked` (the session or token no longer holds; the stream ends after it).
 */
export interface StreamNotices {
  reset: { reason: string };
  revoked: { reason: string };
}
