/**
 * The span tree of polyloop/otel in real Chromium on IndexedDBStore (test/portability/otel-tree.ts):
 * the real OpenTelemetry SDK (sdk-trace-base, its in-memory exporter) in a page, and the same trees
 * as Node (test/node/otel/tree-law.test.ts) and workerd (test/workers/otel-tree-law.test.ts) make.
 */
import { describe, expect, it } from 'vitest';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { EXPECTED } from '../portability/otel-tree-expected.ts';
import { otelTrees } from '../portability/otel-tree.ts';
import { freshDbName } from './idb-store.cases.ts';

const stores: IndexedDBStore[] = [];
const idb = (): IndexedDBStore => {
  const store = new IndexedDBStore({ dbName: freshDbName('otel-tree') });
  stores.push(store);
  return store;
};

describe('the span tree of a run in Chromium (IndexedDBStore)', () => {
  it('a three-step run (without and with content), the run crashed and carried on by its sink, the run resumed by a new process, and the run paused for an approval and approved make the expected trees: one trace, each later driver under the first and linked to it', async () => {
    try {
      expect(await otelTrees({ make: idb })).toEqual({ ...EXPECTED, problems: [] });
    } finally {
      await Promise.all(stores.splice(0).map((s) => s.close()));
    }
  });
});
