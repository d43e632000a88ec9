/**
 * One trace across crashes (docs/observability.md#one-trace-across-crashes), at every write point:
 * a run with a safe tool, the approval of a `never` tool and a final answer is crashed after each of
 * its writes (the failing write lost, and landed, as the crash laws do) and carried on by fresh
 * drivers — each with its own tracer provider and `otelSink`, as a restarted process has, sharing
 * only the store. Every driver opens at most one `invoke_agent` span, exactly one when its call
 * settles; the span whose context `run_started.traceparent` holds is one of them, and every later
 * driver's is in its trace, its child, and linked to it; every span of those drivers is in that
 * trace under its driver's `invoke_agent`; and the run ends as the uninterrupted one, the never tool
 * run once. The same check, given a sink that does not link or a core that drops the trace context,
 * fails.
 */
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import {
  defineAgent,
  InMemoryStore,
  isPolyLoopError,
  readRunLog,
  resume,
  run,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type {
  EventSink,
  InputReply,
  InputRequest,
  LogRecord,
  RunEvent,
  RunRequest,
  RunResult,
  RunStore,
  StepRecord,
  ToolSpec,
} from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { faultyStore, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { LineProcessor, traceparentIds } from './span-lines.ts';
import type { SpanLine } from './span-lines.ts';

const RUN_ID = 'traced';
const SCRIPT = [
  '{"tool":"lookup","args":{"city":"Oslo"}}',
  '{"tool":"note","args":{"text":"rain"}}',
  '{"final":"done"}',
];

/** What the outside world keeps across a case's crashes: each note written. */
type World = { readonly notes: string[] };

function toolsOf(world: World): ToolSpec[] {
  const obj = (name: string): ToolSpec['parameters'] => ({
    type: 'object',
    properties: { [name]: { type: 'string' } },
    required: [name],
  });
  return [
    {
      name: 'lookup',
      description: "A city's weather.",
      parameters: obj('city'),
      replayPolicy: 'safe',
      handler: async (a) => `rain in ${String(a['city'])}`,
    },
    {
      name: 'note',
      description: 'Write a note (must not repeat).',
      parameters: obj('text'),
      replayPolicy: 'never',
      needsApproval: true,
      handler: async (a) => {
        world.notes.push(String(a['text']));
        return `noted ${String(a['text'])}`;
      },
    },
  ];
}

/** Approve; a settlement from what the world shows. */
function replyTo(p: InputRequest, world: World): InputReply {
  if (p.kind !== 'settle') return { kind: 'approve', resultId: p.resultId };
  return world.notes.includes('rain')
    ? { kind: 'executed', resultId: p.resultId, observation: 'noted rain' }
    : { kind: 'retry', resultId: p.resultId };
}

/** What a case changes to show the check can fail: the sink every driver gets, the store under the run. */
type Mutation = { readonly sink?: (s: EventSink) => EventSink; readonly store?: (s: RunStore) => RunStore };

/**
 * One driver: a process's `run` or `resume` call, with its own provider and sink. `idle`: it carries
 * nothing on, and delivers no event — it found the run ended (a crash lost only the answer of the
 * write that ended it), or waiting for a person, and has no reply to give.
 */
type Driver = { readonly spans: LineProcessor; settled: boolean; idle: boolean };

/** A fresh agent, as a restarted process builds it: a new provider, tracer and `otelSink`, the same store. */
function driverOver(store: RunStore, world: World, mutation: Mutation): { driver: Driver; call: Call } {
  const spans = new LineProcessor();
  const provider = new BasicTracerProvider({ spanProcessors: [spans] });
  const sink = otelSink({ tracer: provider.getTracer('crash-trace-law') });
  const registry = ToolRegistry.of(toolsOf(world));
  const agent = defineAgent({
    model: scriptedModel(SCRIPT, { model: 'weather-1' }),
    interpreter: jsonActionInterpreter(),
    store,
    events: mutation.sink ? mutation.sink(sink) : sink,
    syntheticObservations: { notExecuted: 'Not executed.', envError: 'The environment failed.' },
  });
  const request: RunRequest = {
    runId: RUN_ID,
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
    executor: registry.executor(),
    tools: registry,
    context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Look up Oslo, note it.' }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation:\n{observation}',
    toolRenderStyle: 'markdown',
    cancelGraceMs: 1_000,
  };
  const driver: Driver = { spans, settled: false, idle: false };
  const call: Call = async (how) => {
    const result =
      how === 'run' ? await run(agent, request) : await resume(agent, request, how === null ? {} : { input: how });
    driver.settled = true;
    return result;
  };
  return { driver, call };
}

type Call = (how: 'run' | InputReply | null) => Promise<RunResult>;

/** How one case went: its drivers in order, its end, its log and its world. */
type Story = {
  readonly drivers: readonly Driver[];
  readonly result: RunResult;
  readonly log: readonly LogRecord[];
  readonly world: World;
  readonly writes: number;
};

/**
 * The story over `inner`: drivers over the faulty store until it crashes (every write of every
 * driver is a crash point, replies included), then over `inner` itself, each asked again without a
 * reply first (a restarted process does not know what was asked), then with the reply.
 */
async function story(crash: { crashAfterWrites: number; landsBeforeThrow: boolean } | null, mutation: Mutation) {
  const inner = new InMemoryStore();
  const base = mutation.store ? mutation.store(inner) : inner;
  const faulty = faultyStore(base, crash ?? { crashAfterWrites: Number.POSITIVE_INFINITY });
  const world: World = { notes: [] };
  const drivers: Driver[] = [];
  let store: RunStore = faulty;
  let next: 'run' | InputReply | null = 'run';
  for (let n = 0; n < 20; n++) {
    const { driver, call } = driverOver(store, world, mutation);
    drivers.push(driver);
    const found = await inner.readLog(RUN_ID);
    if (next === 'run' && found.length > 0) next = null;
    const state = found.length === 0 ? 'not_started' : readRunLog(found).state;
    driver.idle = state === 'ended' || (state === 'awaiting_input' && next === null);
    let result: RunResult;
    try {
      result = await call(next);
    } catch (e) {
      if (!faulty.crashed || !isPolyLoopError(e, 'store_error')) throw e;
      store = base;
      next = 'run';
      continue;
    }
    if (result.pending === null) {
      const log = await inner.readLog(RUN_ID);
      return { drivers, result, log, world, writes: faulty.writes.length } satisfies Story;
    }
    next = replyTo(result.pending, world);
  }
  throw new Error('more than 20 drivers');
}

const timeless = (steps: readonly StepRecord[]): string =>
  JSON.stringify(steps.map((s) => ({ ...s, startedAt: '', endedAt: '' })));

const invokes = (d: Driver, phase: SpanLine['phase']): SpanLine[] =>
  (phase === 'start' ? d.spans.started : d.spans.ended).filter((l) => l.name === 'invoke_agent');

/** What breaks one trace across the case's drivers; empty when it holds. */
function traceProblems(s: Story): string[] {
  const problems: string[] = [];
  s.drivers.forEach((d, i) => {
    const opened = invokes(d, 'start').length;
    if (opened > 1) problems.push(`driver ${i} opened ${opened} invoke_agent spans`);
    const want = d.idle ? 0 : 1;
    if (d.settled && (opened !== want || invokes(d, 'end').length !== want))
      problems.push(`driver ${i} settled with ${opened} invoke_agent spans opened, ${invokes(d, 'end').length} ended`);
  });
  const traceparent = readRunLog(s.log).started?.traceparent;
  if (traceparent === undefined) return [...problems, 'run_started holds no traceparent'];
  const first = traceparentIds(traceparent);
  const at = s.drivers.findIndex((d) => invokes(d, 'start').some((l) => l.spanId === first.spanId));
  if (at < 0) return [...problems, "no driver's invoke_agent span is the one run_started.traceparent names"];
  s.drivers.slice(at).forEach((d, n) => {
    const i = at + n;
    const [own] = invokes(d, 'start');
    if (own === undefined) return;
    // Attributes set after the span opened are on its end line (a span a crash left open has none).
    const end = invokes(d, 'end').find((l) => l.spanId === own.spanId);
    if (own.traceId !== first.traceId) problems.push(`driver ${i}'s invoke_agent is in trace ${own.traceId}`);
    const linked = own.links.some((l) => l.traceId === first.traceId && l.spanId === first.spanId);
    if (n === 0 && own.links.length > 0) problems.push(`the first driver's invoke_agent has links`);
    if (n > 0 && own.parentSpanId !== first.spanId)
      problems.push(`driver ${i}'s invoke_agent is not the first's child`);
    if (n > 0 && !linked) problems.push(`driver ${i}'s invoke_agent does not link to the first driver's`);
    const resumed = end?.attributes['polyloop.run.resumed'];
    if (end !== undefined && resumed !== n > 0)
      problems.push(`driver ${i}'s invoke_agent says polyloop.run.resumed ${String(resumed)}`);
    for (const span of d.spans.started) {
      if (span === own) continue;
      if (span.traceId !== first.traceId || span.parentSpanId !== own.spanId)
        problems.push(`driver ${i}'s ${span.name} span is not under its invoke_agent in the run's trace`);
    }
  });
  return problems;
}

/** What differs from the uninterrupted story: the end, the trajectory (timestamps aside), the note's runs. */
function lawProblems(ref: Story, s: Story): string[] {
  const problems: string[] = [];
  const end = (r: RunResult): string => JSON.stringify([r.stopReason, r.finalAnswer, r.steps, r.validActions]);
  if (end(s.result) !== end(ref.result)) problems.push(`ended ${end(s.result)}, not ${end(ref.result)}`);
  if (timeless(s.result.trajectory) !== timeless(ref.result.trajectory)) problems.push('the trajectory differs');
  if (JSON.stringify(s.world.notes) !== '["rain"]') problems.push(`the note ran: ${JSON.stringify(s.world.notes)}`);
  return problems;
}

/** Every crash point of the story, both ways, each case's problems prefixed by where it crashed. */
async function atEveryWrite(mutation: Mutation): Promise<{ ref: Story; cases: number; problems: string[] }> {
  const ref = await story(null, mutation);
  const problems = [...traceProblems(ref), ...lawProblems(ref, ref)].map((p) => `uninterrupted: ${p}`);
  let cases = 0;
  for (let k = 0; k < ref.writes; k++) {
    for (const landsBeforeThrow of [false, true]) {
      const s = await story({ crashAfterWrites: k, landsBeforeThrow }, mutation);
      const where = `crash after ${k} writes${landsBeforeThrow ? ' (the next one landed)' : ''}`;
      problems.push(...[...traceProblems(s), ...lawProblems(ref, s)].map((p) => `${where}: ${p}`));
      cases++;
    }
  }
  return { ref, cases, problems };
}

/** The sink, but `run_started` reaches it without the first driver's trace context: it cannot link. */
const forgetful = (sink: EventSink): EventSink => ({
  params: sink.params,
  withMessages: sink.withMessages ?? false,
  ...(sink.traceparent ? { traceparent: sink.traceparent.bind(sink) } : {}),
  deliver(e: RunEvent) {
    if (e.type !== 'run_started' || e.traceparent === undefined) return sink.deliver(e);
    const { traceparent: _dropped, ...rest } = e;
    return sink.deliver(rest);
  },
});

/** The store, but `run_started` is kept without its traceparent, as a core that dropped it would write. */
function droppingTraceparent(inner: RunStore): RunStore {
  const runStarted: RunStore['runStarted'] = (runId, rec) => {
    const { traceparent: _dropped, ...rest } = rec;
    return inner.runStarted(runId, rest);
  };
  return new Proxy(inner, {
    get(target, key) {
      if (key === 'runStarted') return runStarted;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('one trace across crashes, at every write point', () => {
  it('every driver one invoke_agent span, all in the first driver’s trace and linked to its span; the run ends as the uninterrupted one', async () => {
    const { ref, cases, problems } = await atEveryWrite({});
    expect(problems).toEqual([]);
    // The uninterrupted story: a driver until the approval, one more after it.
    expect(ref.drivers).toHaveLength(2);
    expect(ref.result.trajectory.map((s) => s.actionStatus)).toEqual(['executed', 'executed', null]);
    expect(ref.writes).toBeGreaterThan(12);
    expect(cases).toBe(ref.writes * 2);
  });

  it('marks where each later driver took the run over, in the log and on its invoke_agent span', async () => {
    // Crashed before step 1's model reply landed: one driver asks the model again and then for the
    // approval, the next carries the reply out.
    const s = await story({ crashAfterWrites: 5, landsBeforeThrow: false }, {});
    expect(s.drivers.map((d) => d.settled)).toEqual([false, true, true]);
    const marks = readRunLog(s.log).resumes.map(({ stepIndex, resolution }) => ({ stepIndex, resolution }));
    expect(marks).toEqual([
      { stepIndex: 1, resolution: 'reissue_model' },
      { stepIndex: 1, resolution: 'await_input' },
    ]);
    const took = s.drivers.slice(1).map((d) => invokes(d, 'end')[0]?.attributes);
    expect(took).toEqual(
      marks.map((m) =>
        expect.objectContaining({
          'polyloop.run.resumed': true,
          'polyloop.run.from_step': m.stepIndex,
          'polyloop.run.resolution': m.resolution,
        }),
      ),
    );
  });

  it('fails with a sink that does not link a later driver’s span to the first', async () => {
    const { problems } = await atEveryWrite({ sink: forgetful });
    expect(problems.some((p) => /does not link to the first driver's/.test(p))).toBe(true);
    expect(problems.some((p) => /^uninterrupted: driver 1's invoke_agent is in trace/.test(p))).toBe(true);
  });

  it('fails with a core that drops the traceparent from run_started', async () => {
    const { problems } = await atEveryWrite({ store: droppingTraceparent });
    expect(problems).toContain('uninterrupted: run_started holds no traceparent');
  });
});
