/** null when `tag` releases `version`, else the reason it does not. */
export declare function tagProblem(tag: string, version: string): string | null;
