export interface Commit {
  hash: string;
  subject: string;
}
export declare function classifyCommit(subject: string): { group: 'features' | 'fixes' | 'other' | 'skip'; text: string; breaking: boolean };
export declare function renderNotes(commits: Commit[], range: { tag: string; previousTag: string | null }): string;
export declare function previousTag(cwd: string, tag: string): string | null;
export declare function commitsFor(cwd: string, tag: string, from: string | null): Commit[];
export declare function releaseNotes(cwd: string, tag: string): string;
