/**
 * Temporary directories for the Node tests, each made under the OS temp dir and removed with
 * everything in it: `tempDir` when the test that made it finishes, a directory of
 * `sharedTempDirs()` after the last test of the file or `describe` that registered it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';
import type { TestContext } from 'vitest';

const DEFAULT_PREFIX = 'polyloop-';

const remove = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true });

/**
 * A fresh directory, removed when the current test finishes, passed or failed (after its
 * `afterEach` hooks). Call it inside a test; a concurrent test passes its own context (`async
 * (t) => tempDir('p-', t)`), as Vitest cannot tell which of them is current. For a directory a
 * `beforeAll` makes, use {@link sharedTempDirs}.
 */
export async function tempDir(prefix = DEFAULT_PREFIX, test?: Pick<TestContext, 'onTestFinished'>): Promise<string> {
  let dir: string | null = null;
  const cleanup = (): Promise<void> | undefined => (dir === null ? undefined : remove(dir));
  try {
    (test?.onTestFinished ?? onTestFinished)(cleanup);
  } catch (e) {
    const hint = 'call it inside a test; in a beforeAll use sharedTempDirs()';
    throw new Error(`tempDir() removes its directory when the test finishes: ${hint} (${String(e)})`);
  }
  dir = await mkdtemp(join(tmpdir(), prefix));
  return dir;
}

/** What {@link sharedTempDirs} returns: `make(prefix)` makes one more directory. */
export type SharedTempDirs = { readonly make: (prefix?: string) => Promise<string> };

/**
 * Directories shared by the tests of a file or a `describe`. Call it where that body runs (at the
 * top of the file, or in the `describe`), then `make(prefix)` in a `beforeAll` or at the top level:
 * every directory it made is removed after the last test there. Its `afterAll` is registered
 * first, so it runs after the other `afterAll` hooks (Vitest runs them last-registered first):
 * a server still serving a directory is closed before the directory goes.
 */
export function sharedTempDirs(): SharedTempDirs {
  const made: string[] = [];
  afterAll(async () => {
    for (const dir of made.splice(0)) await remove(dir);
  });
  return {
    make: async (prefix = DEFAULT_PREFIX) => {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
  };
}
