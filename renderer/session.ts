import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export type Role = 'viewer' | 'operator' | 'administrator';
export type Capability =
  | 'fleet.read'
  | 'diagnostics.read'
  | 'fleet.operate'
  | 'content.read'
  | 'content.manage'
  | 'hosts.read'
  | 'hosts.manage'
  | 'settings.manage'
  | 'users.manage'
  | 'self';

export interface Account {
  id: number;
  username: string;
  display_name?: string;
  role: Role;
  enabled?: boolean;
  must_change_password?: boolean;
  created_at?: string;
  last_login_at?: string | null;
}

/** PRODUCT.md's capability table, used only to decide what to offer: the server enforces it. */
const GRANTS: Record<Role, Capability[]> = {
  viewer: ['fleet.read', 'content.read', 'hosts.read', 'self'],
  operator: ['fleet.read', 'diagnostics.read', 'fleet.operate', 'content.read', 'content.manage', 'hosts.read', 'self'],
  administrator: [
    'fleet.read',
    'diagnostics.read',
    'fleet.operate',
    'content.read',
    'content.manage',
    'hosts.read',
    'hosts.manage',
    'settings.manage',
    'users.manage',
    'self',
  ],
};

export interface Session {
  /** The signed-in account; null while signed out (nothing offered). */
  user: Account | null;
  can(capability: Capability): boolean;
  refresh(): Promise<void>;
}

export function sessionFor(user: Account | null, refresh: () => Promise<void>): Session {
  return { user, refresh, can: (capability) => user !== null && GRANTS[user.role]?.includes(capability) === true };
}

export const SessionContext = createContext<Session>(sessionFor(null, async () => {}));
export const useSession = () => useContext(SessionContext);
