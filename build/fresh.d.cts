/** Types for fresh.cjs, so tests can ask which targets are stale. */
export declare const OUTPUTS: Record<'server' | 'electron' | 'renderer', { sources: string[]; outfile: string }>;
export declare function isFresh(root: string, target: { sources: string[]; outfile: string }, seen?: Map<string, number>): boolean;
export declare function staleTargets(root: string): string[];
