/**
 * One otelSink for many runs: a sub-agent nests under the action that ran it (and, when it waits
 * for a person, under the action of each driver that carries it on), concurrent runs keep their
 * spans apart, options it does not know are refused, and a tracer that throws costs the run nothing
 * but counted delivery failures.
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, InMemoryStore, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { AgentDefinition, EventSink, RunStore, ToolSpec } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { expectUnknownOption, refusalOf } from '../../contract/unknown-option.ts';
import { CHILD_SCRIPT, defaultsFor, PARENT_SCRIPT, researchTool, SYNTHETIC } from '../subagents/family.ts';
import { makeTools } from '../core/fixtures.ts';
import { only, parentOf, tracedAgent, tracing, treeOf } from './sink-fixtures.ts';
import type { Tracing } from './sink-fixtures.ts';

/** A parent whose `research` tool runs a child agent; both agents' events go to `events`. */
function family(
  events: EventSink,
  noteNeedsApproval: boolean,
  store: RunStore = new InMemoryStore(),
  childEvents: EventSink = events,
) {
  const note: ToolSpec = {
    name: 'note',
    description: 'Write a note.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    replayPolicy: 'never',
    needsApproval: noteNeedsApproval,
    handler: async (args) => `noted ${String(args['text'])}`,
  };
  const agent = (script: readonly string[], tools: ToolRegistry, sink = events): AgentDefinition =>
    defineAgent({
      model: scriptedModel(script),
      interpreter: jsonActionInterpreter(),
      store,
      events: sink,
      syntheticObservations: SYNTHETIC,
      defaults: defaultsFor(tools),
    });
  const child = agent(CHILD_SCRIPT, ToolRegistry.of([note]), childEvents);
  return { parent: agent(PARENT_SCRIPT, ToolRegistry.of([researchTool(child)])), store };
}

const idOf = (t: Tracing, name: string, runId: string) =>
  t.spans().filter((s) => s.name === name && s.attributes['gen_ai.conversation.id'] === runId);

describe('otelSink: sub-agents', () => {
  it("nests a sub-agent's invoke_agent under the execute_tool span of the action that ran it", async () => {
    const t = tracing();
    const { parent } = family(otelSink({ tracer: t.tracer }), false);
    const result = await run(parent, { runId: 'p', goal: 'find it' });
    expect(result.stopReason).toBe('final_answer');
    expect(treeOf(t.spans())).toEqual([
      'invoke_agent',
      '  chat scripted',
      '  execute_tool research',
      '    invoke_agent',
      '      chat scripted',
      '      execute_tool note',
      '      chat scripted',
      '  chat scripted',
    ]);
    const research = only(t.spans(), 'execute_tool research');
    const childRunId = research.attributes['polyloop.child_run.id'];
    expect(typeof childRunId).toBe('string');
    const [childRoot] = idOf(t, 'invoke_agent', String(childRunId));
    expect(parentOf(t.spans(), childRoot as never)).toBe(research);
  });

  it("starts a sub-agent whose agent has another sink in a trace of its own, named by the parent's action", async () => {
    const t = tracing();
    const { parent } = family(otelSink({ tracer: t.tracer }), false, undefined, otelSink({ tracer: t.tracer }));
    expect((await run(parent, { runId: 'p', goal: 'find it' })).stopReason).toBe('final_answer');
    const research = only(t.spans(), 'execute_tool research');
    const childRunId = String(research.attributes['polyloop.child_run.id']);
    const [childRoot] = idOf(t, 'invoke_agent', childRunId);
    expect(childRoot?.parentSpanContext).toBeUndefined();
    expect(childRoot?.spanContext().traceId).not.toBe(research.spanContext().traceId);
    expect(treeOf(t.spans())).toEqual([
      'invoke_agent',
      '  chat scripted',
      '  execute_tool research',
      '  chat scripted',
      'invoke_agent',
      '  chat scripted',
      '  execute_tool note',
      '  chat scripted',
    ]);
  });

  it('carries a sub-agent that waits for a person on under the action of the driver that resumes it', async () => {
    const t = tracing();
    const { parent } = family(otelSink({ tracer: t.tracer }), true);
    const paused = await run(parent, { runId: 'p', goal: 'find it' });
    expect(paused.stopReason).toBe('awaiting_input');
    const research = only(t.spans(), 'execute_tool research');
    expect(research.attributes['polyloop.action.pending_input']).toBe('approval');
    const childRunId = String(research.attributes['polyloop.child_run.id']);
    expect(idOf(t, 'invoke_agent', childRunId)[0]?.attributes['polyloop.run.pending_input']).toBe('approval');
    expect(idOf(t, 'invoke_agent', 'p')[0]?.attributes['polyloop.run.pending_input']).toBe('child');

    const input = { kind: 'approve' as const, resultId: paused.pending?.resultId ?? '' };
    expect((await resume(parent, { runId: 'p', goal: 'find it' }, { input })).stopReason).toBe('final_answer');
    const spans = t.spans();
    expect(treeOf(spans)).toEqual([
      'invoke_agent',
      '  chat scripted',
      '  execute_tool research',
      '    invoke_agent',
      '      chat scripted',
      '  invoke_agent',
      '    execute_tool research',
      '      invoke_agent',
      '        execute_tool note',
      '        chat scripted',
      '    chat scripted',
    ]);
    const [childFirst, childSecond] = idOf(t, 'invoke_agent', childRunId);
    expect(childSecond?.links[0]?.context.spanId).toBe(childFirst?.spanContext().spanId);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
  });
});

describe('otelSink: many runs at once', () => {
  it('keeps the spans of two concurrent runs on one sink apart, each under its own invoke_agent', async () => {
    const t = tracing();
    const sink = otelSink({ tracer: t.tracer });
    const script = ['{"tool":"add","args":{"a":1,"b":2}}', '{"tool":"add","args":{"a":3,"b":4}}', '{"final":"7"}'];
    // Each tool call waits for the other run's to start: the runs' events interleave step by step.
    const gates = new Map<string, () => void>();
    const met = (me: string, other: string) =>
      new Promise<void>((resolve) => {
        const theirs = gates.get(other);
        if (theirs) {
          gates.delete(other);
          theirs();
          resolve();
        } else gates.set(me, resolve);
      });
    const runOf = (runId: string, other: string) => {
      const add: ToolSpec = {
        ...(makeTools()[0] as ToolSpec),
        handler: async (args) => {
          await met(runId, other);
          return String((args['a'] as number) + (args['b'] as number));
        },
      };
      const { agent, request } = tracedAgent(sink, { script, tools: [add], runId });
      return run(agent, request);
    };
    const results = await Promise.all([runOf('a', 'b'), runOf('b', 'a')]);
    expect(results.map((r) => r.stopReason)).toEqual(['final_answer', 'final_answer']);
    const spans = t.spans();
    expect(spans.length).toBe(12);
    for (const runId of ['a', 'b']) {
      const [root] = idOf(t, 'invoke_agent', runId);
      const mine = spans.filter((s) => s.attributes['gen_ai.conversation.id'] === runId);
      expect(mine.length).toBe(6);
      for (const s of mine) expect(s.spanContext().traceId, `${runId} ${s.name}`).toBe(root?.spanContext().traceId);
      expect(treeOf(mine)).toEqual([
        'invoke_agent',
        '  chat scripted',
        '  execute_tool add',
        '  chat scripted',
        '  execute_tool add',
        '  chat scripted',
      ]);
    }
  });
});

describe('otelSink: options', () => {
  const { tracer } = tracing();

  it('refuses an option it does not know, naming the one most likely meant', async () => {
    await expectUnknownOption(
      () => otelSink({ tracer, captureContnet: true } as never),
      'captureContnet',
      'captureContent',
    );
    await expectUnknownOption(() => otelSink({ tracer, tracr: tracer } as never), 'tracr', 'tracer');
  });

  it('refuses a missing tracer, a tracer that is none, and a captureContent that is not a boolean', async () => {
    expect(await refusalOf(() => otelSink({} as never))).toContain(
      'otelSink: tracer must be an @opentelemetry/api Tracer',
    );
    expect(await refusalOf(() => otelSink({ tracer: {} as never }))).toContain('otelSink: tracer must be');
    expect(await refusalOf(() => otelSink({ tracer, captureContent: 'yes' as never }))).toContain(
      'otelSink: captureContent must be true or false',
    );
    expect(await refusalOf(() => otelSink(undefined as never))).toBe('otelSink needs an options object, got undefined');
  });
});

describe('otelSink: a tracer that throws', () => {
  const SCRIPT = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];

  it('costs the run nothing but counted delivery failures when every span fails to start', async () => {
    const broken = {
      startSpan: () => {
        throw new Error('exporter down');
      },
      startActiveSpan: () => undefined,
    };
    const { agent, request } = tracedAgent(otelSink({ tracer: broken as never }), { script: SCRIPT });
    const result = await run(agent, request);
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: '3' });
    // The traceparent hook and run_started each tried to open the run's span; nothing else was tried.
    expect(result.eventDeliveryFailures).toBe(2);
  });

  it('keeps the spans it could open when only some fail, and the run goes on', async () => {
    const t = tracing();
    const flaky = {
      startSpan: (name: string, ...rest: unknown[]) => {
        if (name.startsWith('chat')) throw new Error('no chat spans today');
        return (t.tracer.startSpan as (...a: unknown[]) => unknown)(name, ...rest);
      },
      startActiveSpan: () => undefined,
    };
    const { agent, request } = tracedAgent(otelSink({ tracer: flaky as never }), { script: SCRIPT });
    const result = await run(agent, request);
    expect(result).toMatchObject({ stopReason: 'final_answer', eventDeliveryFailures: 2 });
    expect(treeOf(t.spans())).toEqual(['invoke_agent', '  execute_tool add']);
    expect(only(t.spans(), 'invoke_agent').attributes['polyloop.run.stop_reason']).toBe('final_answer');
  });
});
