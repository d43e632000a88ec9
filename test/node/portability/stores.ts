/** The stores Node has, each fresh per call: memory, a FileStore in a temp dir, IndexedDB over fake-indexeddb. */
import 'fake-indexeddb/auto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryStore } from '../../../src/core/index.ts';
import type { RunStore } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/file-store.ts';
import { IndexedDBStore } from '../../../src/platform-web/index.ts';
import { freshDbName } from '../../browser/idb-store.cases.ts';

export const NODE_STORES = ['memory', 'file', 'indexeddb'] as const;
export type NodeStore = (typeof NODE_STORES)[number];

const dirs: string[] = [];

/** A temp directory, removed by {@link removeTempDirs}. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'polyloop-port-'));
  dirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A fresh, empty store of that kind. */
export function freshStore(kind: NodeStore): RunStore {
  switch (kind) {
    case 'memory':
      return new InMemoryStore();
    case 'file':
      return new FileStore({ dir: tempDir() });
    case 'indexeddb':
      // Node has no Web Locks: the store warns once per instance that its lease is page-local.
      return new IndexedDBStore({ dbName: freshDbName('portability'), onWarning: () => undefined });
  }
}
