import { sameOriginPath } from '../server/contract/next';

/** Only same-app paths are followed after sign-in, so `?next=` cannot send anyone elsewhere (the server's rule, server/contract/next.ts). */
export function safeNext(raw: string | null): string {
  const path = sameOriginPath(raw);
  return !path || path === '/login' || path.startsWith('/login?') || path.startsWith('/login/') || path.startsWith('/login#') ? '/instances' : path;
}
