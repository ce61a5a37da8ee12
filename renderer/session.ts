import type { Account } from '../server/access/accounts';
import { roleHas } from '../server/access/capabilities';
import type { Capability } from '../server/http/routes';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export type { Capability } from '../server/http/routes';
export type { Role } from '../server/access/capabilities';

export type { Account } from '../server/access/accounts';

export interface Session {
  /** The signed-in account; null while signed out (nothing offered). */
  user: Account | null;
  can(capability: Capability): boolean;
  refresh(): Promise<void>;
}

export function sessionFor(user: Account | null, refresh: () => Promise<void>): Session {
  return { user, refresh, can: (capability) => user !== null && roleHas(user.role, capability) };
}

export const SessionContext = createContext<Session>(sessionFor(null, async () => {}));
export const useSession = () => useContext(SessionContext);
