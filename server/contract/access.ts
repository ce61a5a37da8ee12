/** Capability names of PRODUCT.md's table. */
export const CAPABILITIES = [
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
] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const ROLES = ['viewer', 'operator', 'administrator'] as const;
export type Role = (typeof ROLES)[number];

/** PRODUCT.md's capability table, row for row: which roles hold each capability. */
export const ROLE_TABLE: Readonly<Record<Capability, readonly Role[]>> = {
  'fleet.read': ['viewer', 'operator', 'administrator'],
  'diagnostics.read': ['operator', 'administrator'],
  'fleet.operate': ['operator', 'administrator'],
  'content.read': ['viewer', 'operator', 'administrator'],
  'content.manage': ['operator', 'administrator'],
  'hosts.read': ['viewer', 'operator', 'administrator'],
  'hosts.manage': ['administrator'],
  'settings.manage': ['administrator'],
  'users.manage': ['administrator'],
  self: ['viewer', 'operator', 'administrator'],
};

export function roleHas(role: Role, capability: Capability): boolean {
  return ROLE_TABLE[capability].includes(role);
}

/** An account as the API shows it: never a hash. */
export interface Account {
  id: number;
  username: string;
  display_name: string;
  role: Role;
  enabled: boolean;
  must_change_password: boolean;
  created_at: string;
  last_login_at: string | null;
}
