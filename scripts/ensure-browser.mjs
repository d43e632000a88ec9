#!/usr/bin/env node
// The first step of `npm test`: make sure a Chromium is there for the browser project and the
// Playwright end-to-end tests, so the README's test command passes on a fresh machine by itself.
// Found: prints nothing. Missing on Debian/Ubuntu as root with apt-get: installs Debian's
// `chromium`, saying so. Otherwise: fails at once with the one command to run. vitest.config.ts
// calls `findBrowser` too, so the path found here is the one the tests launch.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Debian's package and where it puts the binary. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
/** What a person runs on a machine where this script may not install anything itself. */
export const PLAYWRIGHT_INSTALL = 'npx playwright-core install chromium';

const SYSTEM_PATHS = [
  DEBIAN_CHROMIUM,
  '/usr/bin/chromium-browser',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];
/** Inside one Playwright browser folder (`chromium-1234`, `chromium_headless_shell-1234`). */
const PLAYWRIGHT_BINARIES = [
  'chrome-linux/chrome',
  'chrome-linux64/chrome',
  'chrome-linux/headless_shell',
  'chrome-headless-shell-linux64/chrome-headless-shell',
  'chrome-mac/Chromium.app/Contents/MacOS/Chromium',
];

/**
 * The Chromium to launch, or null. Order: `CHROMIUM_PATH` (when set it is the answer, present or
 * not: a path the user chose is never silently replaced), the system paths, then the newest
 * Playwright-installed build under `PLAYWRIGHT_BROWSERS_PATH` or `~/.cache/ms-playwright`. A path
 * counts only if it is an executable file (links followed): a directory or a file without the
 * execute bit would only fail later, inside the browser tests, far from its cause.
 */
export function findBrowser({ env = process.env, exists = isExecutableFile, list = safeList, home = homedir() } = {}) {
  const chosen = env['CHROMIUM_PATH'];
  if (chosen !== undefined && chosen !== '') return exists(chosen) ? { path: chosen, source: 'CHROMIUM_PATH' } : null;
  for (const p of SYSTEM_PATHS) if (exists(p)) return { path: p, source: 'system' };
  const root = env['PLAYWRIGHT_BROWSERS_PATH'] || join(home, '.cache', 'ms-playwright');
  // Newest first: a folder's suffix is Playwright's browser revision.
  const builds = list(root).filter((d) => /^chromium(_headless_shell)?-\d+$/.test(d));
  builds.sort((a, b) => revision(b) - revision(a) || (a.includes('headless') ? 1 : -1));
  for (const d of builds) {
    for (const b of PLAYWRIGHT_BINARIES) {
      const p = join(root, d, b);
      if (exists(p)) return { path: p, source: 'playwright' };
    }
  }
  return null;
}

/**
 * What to do about the browser, from facts about the machine (injected, so tests need no machine
 * of each kind). `machine`: `{ osRelease, uid, hasAptGet }` — the text of /etc/os-release (or
 * null), the user id (null where there is none), whether `apt-get` is on the PATH.
 * Returns `{ action: 'use', path }`, `{ action: 'install', command, message }` or
 * `{ action: 'fail', message }`.
 */
export function decide({ env = process.env, found, machine }) {
  if (found) return { action: 'use', path: found.path };
  const chosen = env['CHROMIUM_PATH'];
  if (chosen !== undefined && chosen !== '') {
    return {
      action: 'fail',
      message: `CHROMIUM_PATH is ${chosen}, and there is no executable file there. Point it at a Chromium or Chrome binary, or unset it.`,
    };
  }
  const debianLike = isDebianLike(machine.osRelease);
  const apt = 'apt-get install -y chromium';
  if (debianLike && machine.uid === 0 && machine.hasAptGet) {
    return {
      action: 'install',
      command: ['sh', '-c', `apt-get update -qq && DEBIAN_FRONTEND=noninteractive ${apt}`],
      message: `No Chromium found (CHROMIUM_PATH unset, nothing at ${DEBIAN_CHROMIUM}, no Playwright build): installing Debian's chromium for the browser tests (${apt})…`,
    };
  }
  const command = debianLike && machine.hasAptGet ? `sudo ${apt}` : PLAYWRIGHT_INSTALL;
  return {
    action: 'fail',
    message: `No Chromium found for the browser tests (CHROMIUM_PATH unset, nothing at ${DEBIAN_CHROMIUM}, no Playwright build). Run:\n\n    ${command}\n\nthen \`npm test\` again (or set CHROMIUM_PATH to a Chromium or Chrome binary).`,
  };
}

/** True for Debian, Ubuntu and their derivatives, read from /etc/os-release. */
export function isDebianLike(osRelease) {
  if (osRelease === null || osRelease === undefined) return false;
  const field = (k) =>
    (osRelease.match(new RegExp(`^${k}=("?)([^"\\n]*)\\1$`, 'm'))?.[2] ?? '').toLowerCase().split(/\s+/);
  return [...field('ID'), ...field('ID_LIKE')].some((id) => id === 'debian' || id === 'ubuntu');
}

/** True for an executable regular file (a link to one included). */
export function isExecutableFile(path) {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false; // missing, a dangling link, or not executable by us
  }
}

function revision(dir) {
  return Number(dir.slice(dir.lastIndexOf('-') + 1));
}

function safeList(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return []; // no Playwright cache: nothing installed there
  }
}

function readMachine() {
  let osRelease = null;
  try {
    osRelease = readFileSync('/etc/os-release', 'utf8');
  } catch {
    osRelease = null; // not Linux, or a minimal image: not a machine we install on
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  const hasAptGet = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
  return { osRelease, uid, hasAptGet };
}

function main() {
  const first = decide({ found: findBrowser(), machine: readMachine() });
  if (first.action === 'use') return 0;
  if (first.action === 'fail') {
    process.stderr.write(`\n${first.message}\n\n`);
    return 1;
  }
  process.stderr.write(`\n${first.message}\n\n`);
  const [cmd, ...args] = first.command;
  const done = spawnSync(cmd, args, { stdio: 'inherit' });
  const after = findBrowser();
  if (done.status !== 0 || after === null) {
    process.stderr.write(
      `\nInstalling chromium failed (exit ${done.status}). Run \`apt-get install -y chromium\` yourself, or set CHROMIUM_PATH.\n\n`,
    );
    return 1;
  }
  process.stderr.write(`Chromium installed at ${after.path}.\n\n`);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main();
