import type { RoleMap } from '../config.js';
import { roleRank, type Role } from '../contract/access.js';
import { sameOriginPath } from '../contract/next.js';

/**
 * The claim's values at `name`: the claim itself (a list or one string), or, when there is no claim
 * of that exact name, the dotted path into nested claims (Keycloak's `realm_access.roles`).
 */
export function claimValues(claims: Record<string, unknown>, name: string): string[] {
  let value: unknown = claims[name];
  if (value === undefined && name.includes('.')) {
    value = name.split('.').reduce<unknown>((at, key) => (at && typeof at === 'object' && !Array.isArray(at) ? (at as Record<string, unknown>)[key] : undefined), claims);
  }
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/**
 * FLEET_OIDC_ROLE_MAP applied to the claim's values: "the highest role that any claim value maps to
 * wins; `*` applies only when no value matches; no match and no `*` → sign-in refused" (undefined).
 */
export function mapRole(values: readonly string[], map: RoleMap): Role | undefined {
  let best: Role | undefined;
  for (const value of values) {
    const role = map.values.get(value);
    if (role && (best === undefined || roleRank(role) > roleRank(best))) best = role;
  }
  return best ?? map.fallback;
}

/**
 * A username from the provider's `preferred_username` (else its e-mail's local part, else `user`),
 * cut to the characters and length homefleet's usernames allow, made unique with -2, -3, …
 */
export function uniqueUsername(claims: Record<string, unknown>, taken: (name: string) => boolean): string {
  const wanted = [claims.preferred_username, typeof claims.email === 'string' ? claims.email.split('@')[0] : undefined, 'user']
    .map((v) => (typeof v === 'string' ? v.replace(/[^A-Za-z0-9._@-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 56) : ''))
    .find((v) => v !== '')!;
  if (!taken(wanted)) return wanted;
  for (let n = 2; ; n++) {
    const candidate = `${wanted}-${n}`;
    if (!taken(candidate)) return candidate;
  }
}

/** `next` after sign-in: a path on this origin only ("a same-origin path only, else /"). */
export const nextPath = (raw: unknown): string => sameOriginPath(raw) ?? '/';
