/** Types of scripts/ensure-browser.mjs (plain JavaScript so `npm test` can run it before anything is compiled). */
export interface FoundBrowser {
  readonly path: string;
  readonly source: 'CHROMIUM_PATH' | 'system' | 'playwright';
}
export interface FindBrowserOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly exists?: (path: string) => boolean;
  readonly list?: (dir: string) => readonly string[];
  readonly home?: string;
}
export interface Machine {
  readonly osRelease: string | null;
  readonly uid: number | null;
  readonly hasAptGet: boolean;
}
export type BrowserDecision =
  | { readonly action: 'use'; readonly path: string }
  | { readonly action: 'install'; readonly command: readonly string[]; readonly message: string }
  | { readonly action: 'fail'; readonly message: string };
export declare const DEBIAN_CHROMIUM: string;
export declare const PLAYWRIGHT_INSTALL: string;
/** The Chromium to launch, or null: `CHROMIUM_PATH`, the system paths, then a Playwright-installed build. */
export declare function findBrowser(options?: FindBrowserOptions): FoundBrowser | null;
/** What to do about the browser on this machine: use it, install Debian's chromium, or fail with the command to run. */
export declare function decide(options: {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly found: FoundBrowser | null;
  readonly machine: Machine;
}): BrowserDecision;
/** True for an executable regular file (a link to one included): what findBrowser accepts by default. */
export declare function isExecutableFile(path: string): boolean;
/** True for Debian, Ubuntu and their derivatives, read from the text of /etc/os-release. */
export declare function isDebianLike(osRelease: string | null | undefined): boolean;
