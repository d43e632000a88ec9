/**
 * The span tree of polyloop/otel in Node on FileStore (test/portability/otel-tree.ts), the tree
 * workerd (test/workers/otel-tree-law.test.ts) and Chromium (test/browser/otel-tree-law.test.ts)
 * make too: a three-step run traced into the real OpenTelemetry SDK (without and with content), the
 * same run crashed after its failing deploy and carried on by the same sink, and resumed by a new
 * process. And the law can fail: a lost trace context, spans timed by another clock.
 */
import type { Tracer } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventSink } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { EXPECTED } from '../../portability/otel-tree-expected.ts';
import { otelTrees } from '../../portability/otel-tree.ts';
import { freshStore, removeTempDirs } from '../portability/stores.ts';

afterAll(removeTempDirs);

describe('the span tree of a run in Node (FileStore)', () => {
  it('a three-step run (without and with content), the run crashed and carried on by its sink, the run resumed by a new process, and the run paused for an approval and approved make the expected trees: one trace, each later driver under the first and linked to it', async () => {
    expect(await otelTrees({ make: () => freshStore('file') })).toEqual({ ...EXPECTED, problems: [] });
  });

  it('the law can fail: a sink that drops the first driver’s trace context starts the resumed driver in a trace of its own', async () => {
    const forgetful = (tracer: Tracer, captureContent: boolean): EventSink => {
      const sink = otelSink({ tracer, captureContent });
      return {
        params: sink.params,
        traceparent: (runId) => sink.traceparent?.(runId),
        deliver: (e) => {
          if (e.type !== 'run_started') return sink.deliver(e);
          const { traceparent: _dropped, ...rest } = e;
          return sink.deliver(rest);
        },
      };
    };
    const trees = await otelTrees({ make: () => freshStore('memory'), sink: forgetful });
    expect(trees.plain).toEqual(EXPECTED.plain);
    expect(trees.crashed).not.toEqual(EXPECTED.crashed);
    expect(trees.paused).not.toEqual(EXPECTED.paused);
    // The crashed run carried on, the one resumed by a new process, the approved one: each in two traces.
    expect(trees.problems).toEqual(Array(3).fill('the spans are in 2 traces, not one'));
  });

  it('the law can fail: model-call spans timed by another clock, an hour behind, lie outside their invoke_agent', async () => {
    const skewed = (tracer: Tracer, captureContent: boolean): EventSink =>
      otelSink({
        captureContent,
        tracer: {
          startSpan: (name, options, ctx) =>
            tracer.startSpan(
              name,
              name.startsWith('chat') ? { ...options, startTime: new Date(Date.now() - 3_600_000) } : options,
              ctx,
            ),
          startActiveSpan: tracer.startActiveSpan.bind(tracer),
        },
      });
    const trees = await otelTrees({ make: () => freshStore('memory'), sink: skewed });
    expect(trees.plain).toEqual(EXPECTED.plain);
    expect(trees.problems).toContain('chat weather-model (step 1) is not within its invoke_agent');
  });
});
