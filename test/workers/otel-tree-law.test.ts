/**
 * The span tree of polyloop/otel in workerd on DurableObjectStore (test/portability/otel-tree.ts):
 * the real OpenTelemetry SDK (sdk-trace-base, its in-memory exporter) bundled into the Worker, and
 * the same trees as Node (test/node/otel/tree-law.test.ts) and Chromium make — although workerd's
 * clock stands still while code runs, which the trees leave out and the law's time checks allow.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { RunStore } from '../../src/core/index.ts';
import { EXPECTED } from '../portability/otel-tree-expected.ts';
import { otelTrees } from '../portability/otel-tree.ts';
import { storeIn } from './store-in-object.ts';

const object = (): RunStore => storeIn(env.RUNS.get(env.RUNS.newUniqueId()));

describe('the span tree of a run in workerd (DurableObjectStore)', () => {
  it('a three-step run (without and with content), the run crashed and carried on by its sink, the run resumed by a new process, and the run paused for an approval and approved make the expected trees: one trace, each later driver under the first and linked to it', async () => {
    expect(await otelTrees({ make: object })).toEqual({ ...EXPECTED, problems: [] });
  });
});
