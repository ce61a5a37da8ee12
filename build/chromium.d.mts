import type { LaunchOptions } from 'playwright-core';

export declare const root: string;
export declare const SYSTEM_CHROMIUM: string;
/** Which Chromium HOMEFLEET_CHROMIUM and this machine call for: 'system', 'npm', or an executable's path. */
export declare function chromiumChoice(env?: NodeJS.ProcessEnv): string;
/** playwright-core launch options for the chosen Chromium (unpacking the npm build on first use). */
export declare function chromiumLaunchOptions(env?: NodeJS.ProcessEnv): Promise<LaunchOptions>;
/** The folder holding the npm build's `chromium`, `lib/` and `fonts.conf`, unpacked once per package version. */
export declare function unpackNpmChromium(): Promise<string>;
