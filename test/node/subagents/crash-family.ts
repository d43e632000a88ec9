/**
 * The family of stored-family.ts on a FileStore under `<root>`, for a real process and for the
 * test itself: each run of the child's `note` tool appends a line to the marker file (the count
 * the tests check).
 *
 * Two hold files let a test kill a process at a chosen point: while `<root>/hold-note` exists, the
 * `note` tool, having appended its line, does not return; while `<root>/hold-parent-step` exists,
 * the parent's step record is not written. Each prints `HELD <what>` once it waits.
 */
import { appendFileSync, existsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { RunStore } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { storedFamily } from './stored-family.ts';
import type { StoredFamily } from './stored-family.ts';

/** The runs' directory and the marker file under `root`. */
export const pathsOf = (root: string) => ({ dir: join(root, 'runs'), marker: join(root, 'note-ran.txt') });

/** Wait while `<root>/hold-<what>` exists, saying so once on stdout (synchronously: a kill may follow at once). */
async function holdWhile(root: string, what: string): Promise<void> {
  const file = join(root, `hold-${what}`);
  if (!existsSync(file)) return;
  writeSync(1, `HELD ${what}\n`);
  while (existsSync(file)) await new Promise((r) => setTimeout(r, 10));
}

/** The parent's store: the FileStore, its step record held back while `hold-parent-step` exists. */
function holdingStore(inner: FileStore, root: string): RunStore {
  return new Proxy(inner, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      if (key !== 'step') return value.bind(target);
      return async (...args: Parameters<FileStore['step']>) => {
        await holdWhile(root, 'parent-step');
        return target.step(...args);
      };
    },
  });
}

export function crashFamily(root: string): StoredFamily {
  const { dir, marker } = pathsOf(root);
  return storedFamily({
    childStore: new FileStore({ dir }),
    parentStore: holdingStore(new FileStore({ dir }), root),
    note: async (text) => {
      appendFileSync(marker, `${text}\n`);
      await holdWhile(root, 'note');
      return `noted ${text}`;
    },
  });
}
