/**
 * Section `otel` of `npm run bench`: what tracing a run with `polyloop/otel` costs
 * (docs/performance.md#opentelemetry), each figure next to a floor sampled in alternation.
 * - Kernel cost per step with `otelSink` against the same runs with `silentSink()`: a real SDK
 *   tracer (`BasicTracerProvider` + `SimpleSpanProcessor`) whose exporter drops every span, and the
 *   API's no-op tracer (no SDK installed); then with `captureContent` (every call's messages copied
 *   and written as JSON), at two run lengths, since what a call is given grows with the run.
 * - Resume of a run crashed at step 200 (InMemoryStore, FileStore): time until the model is called
 *   again against reading the log (as section `resume`), and against the same store without a
 *   `resumed` method (the driver writes no mark: what the mark costs a resume).
 * @module
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProxyTracerProvider, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import type { Attributes, Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { encodeRecord, InMemoryStore, resume, run, silentSink } from '../src/core/index.ts';
import type { EventSink, LogRecord, RunStore } from '../src/core/index.ts';
import { otelSink } from '../src/otel/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { cpuMs, sampleRotated } from './control.ts';
import { benchAgent, benchRequest } from './fixtures.ts';
import type { CallHook } from './fixtures.ts';
import { freshId, row } from './kernel.ts';
import type { Plan, Row } from './kernel.ts';
import { crashedLog, parseFloorMs, replay } from './resume.ts';

const SECTION = 'otel';

/** What a sample's runs are traced with: a sink, and a flush that ends when every span was exported. */
type Tracing = {
  readonly sink: EventSink;
  readonly tracer: Tracer;
  readonly flush: () => Promise<void>;
  readonly spans: () => number;
};

/** A real SDK tracer whose exporter drops every span at once: tracing, short of sending anything. */
function sdkTracing(captureContent: boolean): Tracing {
  let spans = 0;
  const exporter: SpanExporter = {
    export(batch, done): void {
      spans += batch.length;
      done({ code: 0 }); // ExportResultCode.SUCCESS
    },
    shutdown: () => Promise.resolve(),
  };
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer: Tracer = provider.getTracer('polyloop-bench');
  return { sink: otelSink({ tracer, captureContent }), tracer, flush: () => provider.forceFlush(), spans: () => spans };
}

/** The API's tracer when no SDK is installed (a proxy with no delegate: every span a no-op). */
function noopTracing(): Tracing {
  const tracer = new ProxyTracerProvider().getTracer('polyloop-bench');
  return { sink: otelSink({ tracer }), tracer, flush: () => Promise.resolve(), spans: () => 0 };
}

/** No tracing: the floor. */
function silentTracing(): Tracing {
  const tracer = new ProxyTracerProvider().getTracer('polyloop-bench');
  return { sink: silentSink(), tracer, flush: () => Promise.resolve(), spans: () => 0 };
}

/** Spans a traced `n`-step run opens: its `invoke_agent`, a `chat` per step, an `execute_tool` per action. */
const spansPerRun = (n: number): number => 1 + n + (n - 1);

/**
 * CPU µs per step of `runs` runs of `n` steps of the bench's standard agent on one InMemoryStore,
 * their events going to `make()`'s sink (made outside the timing); the SDK's exports are flushed
 * inside it. Throws unless every run ended with its answer and, with an SDK, every span was exported.
 */
async function usPerStep(make: () => Tracing, n: number, runs: number): Promise<number> {
  const tracing = make();
  const agent = benchAgent(new InMemoryStore(), n, undefined, tracing.sink);
  const requests = Array.from({ length: runs }, () => benchRequest(freshId('otel'), n));
  const t0 = cpuMs();
  for (const req of requests) {
    const r = await run(agent, req);
    if (r.stopReason !== 'final_answer' || r.steps !== n || r.eventDeliveryFailures > 0)
      throw new Error(`bench run ended ${r.stopReason} after ${r.steps} steps, ${r.eventDeliveryFailures} failures`);
  }
  await tracing.flush();
  const us = ((cpuMs() - t0) * 1000) / (n * runs);
  const spans = tracing.spans();
  if (spans !== 0 && spans !== spansPerRun(n) * runs)
    throw new Error(`the exporter saw ${spans} spans, not ${spansPerRun(n) * runs}`);
  return us;
}

/**
 * CPU µs per step of the SDK alone: the spans a traced run of `n` steps makes (an `invoke_agent`, a
 * `chat` a step, an `execute_tool` an action, each with the attributes the sink gives it), made
 * in a plain loop on the same SDK setup — what a step's spans cost whoever makes them.
 */
async function sdkAloneUsPerStep(n: number, runs: number): Promise<number> {
  const tracing = sdkTracing(false);
  const tracer = tracing.tracer;
  const t0 = cpuMs();
  for (let r = 0; r < runs; r++) {
    const runId = freshId('sdk');
    const agent = tracer.startSpan('invoke_agent', { kind: SpanKind.INTERNAL, attributes: agentAttributes(runId) });
    const parent = trace.setSpan(ROOT_CONTEXT, agent);
    for (let i = 0; i < n; i++) {
      const chat = tracer.startSpan(
        'chat bench-instant',
        { kind: SpanKind.CLIENT, attributes: chatAttributes(runId, i) },
        parent,
      );
      chat.setAttribute('gen_ai.response.id', `c${i}`);
      chat.end(new Date());
      if (i === n - 1) break;
      const tool = tracer.startSpan(
        'execute_tool noop',
        { kind: SpanKind.INTERNAL, attributes: toolAttributes(runId, i) },
        parent,
      );
      tool.setAttributes({ 'polyloop.action.status': 'ok' });
      tool.end(new Date());
    }
    agent.setAttributes({ 'polyloop.run.stop_reason': 'final_answer', 'polyloop.run.steps': n });
    agent.end(new Date());
  }
  await tracing.flush();
  const us = ((cpuMs() - t0) * 1000) / (n * runs);
  if (tracing.spans() !== spansPerRun(n) * runs) throw new Error(`the exporter saw ${tracing.spans()} spans`);
  return us;
}

const agentAttributes = (runId: string): Attributes => ({
  'gen_ai.operation.name': 'invoke_agent',
  'gen_ai.conversation.id': runId,
  'polyloop.run.resumed': false,
  'polyloop.run.from_step': 0,
});
const chatAttributes = (runId: string, i: number): Attributes => ({
  'gen_ai.operation.name': 'chat',
  'gen_ai.conversation.id': runId,
  'gen_ai.request.model': 'bench-instant',
  'polyloop.step.index': i,
  'polyloop.replay_policy': 'safe',
  'polyloop.replayed': false,
});
const toolAttributes = (runId: string, i: number): Attributes => ({
  'gen_ai.operation.name': 'execute_tool',
  'gen_ai.conversation.id': runId,
  'gen_ai.tool.name': 'noop',
  'gen_ai.tool.call.id': `s${i}.action`,
  'polyloop.step.index': i,
  'polyloop.replay_policy': 'safe',
  'polyloop.replayed': false,
});

/** The median of the per-round differences `a[i] - b[i]` (samples of one round were taken under the same load). */
function extraRow(name: string, unit: string, a: readonly number[], b: readonly number[]): Row {
  return row(
    SECTION,
    name,
    unit,
    { a: a.map((x, i) => x - (b[i] ?? Number.NaN)), b: null },
    'median of the per-round differences',
  );
}

/** The median of the per-round ratios `a[i] / b[i]`. */
function ratioRow(name: string, a: readonly number[], b: readonly number[]): Row {
  return row(
    SECTION,
    name,
    '×',
    { a: a.map((x, i) => x / (b[i] ?? Number.NaN)), b: null },
    'median of the per-round ratios',
  );
}

/** Rows of one traced variant against the silent floor: µs/step, extra µs/step, ratio. */
function tracedRows(label: string, n: number, traced: number[], silent: number[], each: string): Row[] {
  const N = `N=${n.toLocaleString('en-US')}`;
  return [
    row(SECTION, `per step, otelSink ${label}, InMemoryStore, ${N}`, 'µs/step', { a: traced, b: silent }, each),
    extraRow(`per step: otelSink ${label} − silentSink, ${N}`, 'µs/step', traced, silent),
    ratioRow(`per step: otelSink ${label} ÷ silentSink, ${N}`, traced, silent),
  ];
}

/** What each per-step sample is, for the notes. */
const eachNote = (rounds: number, runs: number): string =>
  `CPU time, spans flushed inside it; floor: silentSink() on the same workload; ${rounds} samples of ` +
  `${runs} run${runs === 1 ? '' : 's'}, the order turning each round`;

/** Figure 1: the sink's cost per step, SDK tracer with a dropping exporter and the API's no-op tracer. */
async function perStep(plan: Plan): Promise<Row[]> {
  const n = plan.quick ? 500 : 1_000;
  const runs = plan.quick ? 1 : 8;
  const rounds = plan.quick ? plan.runs : 3 * plan.runs;
  const [silent = [], sdk = [], noop = [], alone = []] = await sampleRotated(
    [
      () => usPerStep(silentTracing, n, runs),
      () => usPerStep(() => sdkTracing(false), n, runs),
      () => usPerStep(noopTracing, n, runs),
      () => sdkAloneUsPerStep(n, runs),
    ],
    { ...plan, runs: rounds },
  );
  const each = eachNote(rounds, runs);
  const N = `N=${n.toLocaleString('en-US')}`;
  return [
    ...tracedRows('(SDK, dropping exporter)', n, sdk, silent, each),
    ...tracedRows("(the API's no-op tracer, no SDK)", n, noop, silent, each),
    row(
      SECTION,
      `per step, the SDK alone: the same spans and attributes made in a loop, no run, ${N}`,
      'µs/step',
      { a: alone, b: null },
      'CPU time, spans flushed inside it; what the SDK (SimpleSpanProcessor, dropping exporter) costs ' +
        'whoever makes the spans',
    ),
    extraRow(
      `per step, the sink's own share with the SDK: otelSink (SDK) − silentSink − the SDK alone, ${N}`,
      'µs/step',
      sdk.map((x, i) => x - (alone[i] ?? Number.NaN)),
      silent,
    ),
  ];
}

/**
 * Figure 2: `captureContent` (SDK tracer, dropping exporter) at two run lengths: each call's
 * messages are the whole conversation so far, so their copy and JSON grow with the step index.
 */
async function content(plan: Plan): Promise<Row[]> {
  const rows: Row[] = [];
  const rounds = plan.quick ? plan.runs : 2 * plan.runs;
  for (const [n, runs] of plan.quick ? [[100, 5] as const] : [[100, 40] as const, [1_000, 2] as const]) {
    const [silent = [], plain = [], captured = []] = await sampleRotated(
      [
        () => usPerStep(silentTracing, n, runs),
        () => usPerStep(() => sdkTracing(false), n, runs),
        () => usPerStep(() => sdkTracing(true), n, runs),
      ],
      { ...plan, runs: rounds },
    );
    const each = eachNote(rounds, runs);
    rows.push(...tracedRows('(SDK, captureContent)', n, captured, silent, each));
    rows.push(ratioRow(`per step: captureContent ÷ without, SDK, N=${n.toLocaleString('en-US')}`, captured, plain));
  }
  return rows;
}

/** How a resume's store is made: a fresh copy of the crashed log each sample, marked or not. */
type Prepare = (marked: boolean) => Promise<RunStore>;

/** Hide the store's `resumed` method: the driver then writes no mark (a store may lack it). */
function withoutMark<S extends RunStore>(store: S): S {
  Object.defineProperty(store, 'resumed', { value: undefined });
  return store;
}

/** Ms from calling `resume` on a run crashed at step `n` until the model is called again, and until it settles. */
type ResumeMs = { readonly toCall: number; readonly whole: number };

/**
 * One resume at step `n` on a fresh copy (as section `resume`: the re-issued call of step `n`,
 * then one more step and the final answer); throws unless the log holds a mark exactly when `marked`.
 */
async function resumeOnce(prepare: Prepare, n: number, marked: boolean): Promise<ResumeMs> {
  const store = await prepare(marked);
  let called = -1;
  const hook: CallHook = (call) => {
    if (called < 0 && call.callSeq === n) called = performance.now();
  };
  const agent = benchAgent(store, n + 2, hook);
  const t0 = performance.now();
  const result = await resume(agent, benchRequest('crashed', n + 2));
  const t1 = performance.now();
  if (called < 0 || result.stopReason !== 'final_answer')
    throw new Error(`resume did not re-issue call ${n} (${result.stopReason})`);
  const log = await store.readLog('crashed');
  if (log.some((r) => r.kind === 'resumed') !== marked)
    throw new Error(`the resumed log ${marked ? 'holds no' : 'holds a'} resumed record`);
  return { toCall: called - t0, whole: t1 - t0 };
}

/** Mean ms of `reps` resumes; `into` gets each sample's mean whole resume, the sample is the time to the call. */
async function meanResumeMs(prepare: Prepare, n: number, reps: number, marked: boolean, into: number[]) {
  let toCall = 0;
  let whole = 0;
  for (let i = 0; i < reps; i++) {
    const ms = await resumeOnce(prepare, n, marked);
    toCall += ms.toCall;
    whole += ms.whole;
  }
  into.push(whole / reps);
  return toCall / reps;
}

/** Figure 3 on one store: resume with and without the mark, and the floor of reading the log. */
async function resumeRows(plan: Plan, label: string, prepare: Prepare, floor: () => Promise<number>, n: number) {
  const reps = plan.quick ? 2 : 10;
  const rounds = plan.quick ? plan.runs : 3 * plan.runs;
  const wholes = { marked: [] as number[], unmarked: [] as number[] };
  const [marked = [], unmarked = [], read = []] = await sampleRotated(
    [
      () => meanResumeMs(prepare, n, reps, true, wholes.marked),
      () => meanResumeMs(prepare, n, reps, false, wholes.unmarked),
      floor,
    ],
    { ...plan, runs: rounds },
  );
  // Warm-up samples first: keep each round's.
  const whole = { marked: wholes.marked.slice(-rounds), unmarked: wholes.unmarked.slice(-rounds) };
  const at = `resume at step ${n}, ${label}`;
  const each = `each sample: the mean of ${reps} resumes; ${rounds} samples, the order turning each round`;
  const floorNote = 'floor: read the log and JSON.parse every line';
  return [
    row(SECTION, `${at}, to the re-issued call, with the mark`, 'ms', { a: marked, b: read }, `${floorNote}; ${each}`),
    row(
      SECTION,
      `${at}, to the re-issued call, no mark`,
      'ms',
      { a: unmarked, b: read },
      `store without resumed; ${each}`,
    ),
    extraRow(`${at}, to the re-issued call: with the mark − without`, 'ms', marked, unmarked),
    row(
      SECTION,
      `${at}, whole resume, with the mark`,
      'ms',
      { a: whole.marked, b: read },
      `until resume settles; ${each}`,
    ),
    row(
      SECTION,
      `${at}, whole resume, no mark`,
      'ms',
      { a: whole.unmarked, b: read },
      `store without resumed; ${each}`,
    ),
    extraRow(`${at}, whole resume: with the mark − without`, 'ms', whole.marked, whole.unmarked),
    ratioRow(`${at}, whole resume: with the mark ÷ without`, whole.marked, whole.unmarked),
  ];
}

/** Figure 3: the `resumed` mark on a resume at step 200, InMemoryStore and FileStore. */
async function resumes(plan: Plan, dir: string): Promise<Row[]> {
  const n = plan.quick ? 30 : 200;
  const records: readonly LogRecord[] = await crashedLog(n);
  const lines = records.map(encodeRecord);
  const source = join(dir, 'crashed.jsonl');
  await writeFile(source, `${lines.join('\n')}\n`);
  const memory: Prepare = async (marked) => {
    const store = new InMemoryStore();
    await replay(store, 'crashed', records);
    return marked ? store : withoutMark(store);
  };
  const file: Prepare = async (marked) => {
    const store = new FileStore({ dir: join(dir, freshId('copy')) });
    await mkdir(store.dir, { recursive: true });
    await writeFile(store.logPath('crashed'), await readFile(source));
    return marked ? store : withoutMark(store);
  };
  return [
    ...(await resumeRows(plan, 'InMemoryStore', memory, () => parseFloorMs(lines, null), n)),
    ...(await resumeRows(plan, 'FileStore', file, () => parseFloorMs(null, source), n)),
  ];
}

/** Section `otel`: the sink's cost per step, with content captured, and the resumed mark's cost on a resume. */
export async function otel(plan: Plan): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-otel-'));
  try {
    return [...(await perStep(plan)), ...(await content(plan)), ...(await resumes(plan, dir))];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
