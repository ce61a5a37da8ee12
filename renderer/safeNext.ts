/** Only same-app paths are followed after sign-in, so `?next=` cannot send anyone elsewhere. */
export function safeNext(raw: string | null): string {
  if (!raw || !raw.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\') || raw.startsWith('/login')) return '/instances';
  return raw;
}
