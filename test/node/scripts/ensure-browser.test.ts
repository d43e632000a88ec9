/**
 * The first step of `npm test` (scripts/ensure-browser.mjs): which Chromium is used, and what
 * happens on a machine without one. The machine is injected, so no test uninstalls anything.
 */
import { spawnSync } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decide, findBrowser, isDebianLike } from '../../../scripts/ensure-browser.mjs';
import { machineHas } from '../../support/machine.ts';
import { tempDir } from '../../support/temp-dir.ts';

const DEBIAN = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n';
const UBUNTU = 'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\n';
const MINT = 'NAME="Linux Mint"\nID=linuxmint\nID_LIKE="ubuntu debian"\n';
const FEDORA = 'NAME="Fedora Linux"\nID=fedora\n';
const HOME = '/home/u';
const PW = `${HOME}/.cache/ms-playwright`;

function machineWith(files: readonly string[], dirs: Record<string, readonly string[]> = {}) {
  const set = new Set(files);
  return { exists: (p: string) => set.has(p), list: (d: string) => dirs[d] ?? [], home: HOME };
}

describe('findBrowser', () => {
  it('takes CHROMIUM_PATH first when the file is there', () => {
    const m = machineWith(['/opt/chrome', '/usr/bin/chromium']);
    expect(findBrowser({ ...m, env: { CHROMIUM_PATH: '/opt/chrome' } })).toEqual({
      path: '/opt/chrome',
      source: 'CHROMIUM_PATH',
    });
  });

  it('never replaces a CHROMIUM_PATH that points nowhere with another browser', () => {
    const m = machineWith(['/usr/bin/chromium']);
    expect(findBrowser({ ...m, env: { CHROMIUM_PATH: '/opt/missing' } })).toBeNull();
  });

  it("finds Debian's /usr/bin/chromium when CHROMIUM_PATH is unset", () => {
    expect(findBrowser({ ...machineWith(['/usr/bin/chromium']), env: {} })).toEqual({
      path: '/usr/bin/chromium',
      source: 'system',
    });
  });

  it('finds the newest Playwright-installed Chromium under ~/.cache/ms-playwright', () => {
    const m = machineWith([`${PW}/chromium-1100/chrome-linux/chrome`, `${PW}/chromium-1200/chrome-linux64/chrome`], {
      [PW]: ['ffmpeg-1010', 'chromium-1100', 'chromium-1200'],
    });
    expect(findBrowser({ ...m, env: {} })).toEqual({
      path: `${PW}/chromium-1200/chrome-linux64/chrome`,
      source: 'playwright',
    });
  });

  it('finds a Playwright headless shell, and looks under PLAYWRIGHT_BROWSERS_PATH when it is set', () => {
    const m = machineWith(['/pw/chromium_headless_shell-1200/chrome-linux/headless_shell'], {
      '/pw': ['chromium_headless_shell-1200'],
    });
    expect(findBrowser({ ...m, env: { PLAYWRIGHT_BROWSERS_PATH: '/pw' } })?.path).toBe(
      '/pw/chromium_headless_shell-1200/chrome-linux/headless_shell',
    );
  });

  it('returns null on a machine with no browser anywhere', () => {
    expect(findBrowser({ ...machineWith([], { [PW]: ['ffmpeg-1010'] }), env: {} })).toBeNull();
  });
});

describe('decide', () => {
  const root = { osRelease: DEBIAN, uid: 0, hasAptGet: true };

  it('uses a browser that was found, whatever the machine', () => {
    expect(
      decide({
        env: {},
        found: { path: '/usr/bin/chromium', source: 'system' },
        machine: { osRelease: null, uid: null, hasAptGet: false },
      }),
    ).toEqual({ action: 'use', path: '/usr/bin/chromium' });
  });

  it.each([
    ['Debian', DEBIAN],
    ['Ubuntu', UBUNTU],
  ])("installs Debian's chromium with a visible message on %s as root with apt-get", (_name, osRelease) => {
    const d = decide({ env: {}, found: null, machine: { ...root, osRelease } });
    expect(d.action).toBe('install');
    if (d.action !== 'install') return;
    expect(d.command.join(' ')).toContain('apt-get install -y chromium');
    expect(d.command.join(' ')).toContain('apt-get update');
    expect(d.message).toContain("installing Debian's chromium");
  });

  it('fails at once with the sudo apt-get command on Debian when not root', () => {
    const d = decide({ env: {}, found: null, machine: { ...root, uid: 1000 } });
    expect(d).toMatchObject({ action: 'fail' });
    if (d.action === 'fail') expect(d.message).toContain('sudo apt-get install -y chromium');
  });

  it.each([
    ['Fedora', FEDORA, 0, false],
    ['macOS (no /etc/os-release)', null, 501, false],
    ['Windows (no uid)', null, null, false],
    ['Debian without apt-get', DEBIAN, 0, false],
  ])('fails at once on %s with the Playwright install command', (_name, osRelease, uid, hasAptGet) => {
    const d = decide({ env: {}, found: null, machine: { osRelease, uid, hasAptGet } });
    expect(d).toMatchObject({ action: 'fail' });
    if (d.action === 'fail') expect(d.message).toContain('npx playwright-core install chromium');
  });

  it('fails naming CHROMIUM_PATH when it points nowhere, and installs nothing even as root on Debian', () => {
    const d = decide({ env: { CHROMIUM_PATH: '/opt/missing' }, found: null, machine: root });
    expect(d).toMatchObject({ action: 'fail' });
    if (d.action === 'fail') expect(d.message).toContain('CHROMIUM_PATH is /opt/missing');
  });
});

describe('isDebianLike', () => {
  it.each([
    [DEBIAN, true],
    [UBUNTU, true],
    [MINT, true],
    [FEDORA, false],
    ['', false],
    [null, false],
  ])('reads os-release %#', (text, expected) => {
    expect(isDebianLike(text)).toBe(expected);
  });
});

describe('ensure-browser on a real file system', () => {
  const SCRIPT = join(import.meta.dirname, '../../../scripts/ensure-browser.mjs');

  const posix = machineHas(
    process.platform !== 'win32',
    'a CHROMIUM_PATH it cannot execute is made with POSIX file modes, which Windows lacks',
  );

  it.runIf(posix)(
    'refuses a CHROMIUM_PATH that is a directory or a file it cannot execute, and npm test stops at once naming it',
    async () => {
      const dir = await tempDir('polyloop-browser-');
      const plain = join(dir, 'chrome.txt');
      await writeFile(plain, 'not a browser');
      await chmod(plain, 0o644);
      for (const path of [dir, plain]) {
        expect(findBrowser({ env: { CHROMIUM_PATH: path }, home: dir })).toBeNull();
        const r = spawnSync(process.execPath, [SCRIPT], {
          env: { ...process.env, CHROMIUM_PATH: path },
          encoding: 'utf8',
        });
        expect(r.status).toBe(1);
        expect(r.stderr).toContain(`CHROMIUM_PATH is ${path}`);
        expect(r.stderr).toMatch(/no executable file/);
      }
      const runnable = join(dir, 'chrome');
      await writeFile(runnable, '#!/bin/sh\n');
      await chmod(runnable, 0o755);
      expect(findBrowser({ env: { CHROMIUM_PATH: runnable }, home: dir })).toEqual({
        path: runnable,
        source: 'CHROMIUM_PATH',
      });
    },
  );
});
