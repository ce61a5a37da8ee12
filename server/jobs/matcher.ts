/**
 * Host names from a remote service matched to instance names: case-insensitively, on the
 * whole name or on the first label of a dotted name (`web01.lan` matches the instance `web01`).
 */
export function createNameMatcher(hostNames: Iterable<string | null | undefined>): (instanceName: string) => boolean {
  const keys = new Set<string>();
  for (const name of hostNames) {
    for (const key of nameKeys(name)) keys.add(key);
  }
  return (instanceName) => keys.has(instanceName.trim().toLowerCase());
}

/** The keys a host name is known by: the whole name and its first label, lower case. */
export function nameKeys(name: string | null | undefined): string[] {
  if (typeof name !== 'string') return [];
  const whole = name.trim().toLowerCase();
  if (whole === '') return [];
  const first = whole.split('.')[0]!;
  return first && first !== whole ? [whole, first] : [whole];
}
