import type { Instance } from '../../contract/registry.js';
import type { TailnetFacts } from '../../registry/service.js';
import type { HttpClient } from '../http.js';

/** One instance's wanted field values; the service applies it through the instance update path. */
export interface Change {
  vmid: number;
  patch: Partial<Pick<Instance, 'tailscale' | 'tailscale_ip' | 'patchmon' | 'semaphore'>>;
  /** Read-only facts learnt with it (tailscale_sync: the device's IPv6 address), kept in the same transaction. */
  facts?: TailnetFacts;
}

/** What a handler wants changed, and what the run's result should say beyond the count (ambiguous names). */
export interface HandlerAnswer {
  changes: Change[];
  notes?: string[];
}

/**
 * A sync job: reads its config, asks its remote service, and says what each instance should
 * look like. It writes nothing; a throw fails the run with the error's message.
 */
export type JobHandler = (config: Record<string, unknown>, instances: readonly Instance[], http: HttpClient) => Promise<HandlerAnswer>;

/** Required config missing: thrown before anything is contacted, naming exactly what to set. */
export function missingConfig(key: string, fields: readonly string[]): Error {
  return new Error(`${key} is not configured: set ${fields.join(' and ')}`);
}
