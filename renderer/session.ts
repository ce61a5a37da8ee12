import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { roleHas, type Account, type Capability } from '../server/contract/access';

export type { Account, Capability, Role } from '../server/contract/access';

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
