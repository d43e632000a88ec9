/**
 * The workload of the long-run bench (`--only=long` and the bench/long-*.ts scripts), in Web APIs
 * only so that Node, a Chromium page and a Durable Object run the same code: a deterministic
 * local model that reads only the last message (the observation of the step before), one trivial
 * safe tool, and a clock that cuts the run into slices. At every slice boundary the model stops
 * the clock, lets the runtime take its readings (heap after a forced GC, bytes the store wrote)
 * and starts the clock again, so a slice's µs/step holds steps only.
 * @module
 */
import { defineAgent, resume, run, ToolRegistry } from '../src/core/index.ts';
import type { AgentDefinition, EventSink, ModelCaller, RunRequest, RunStore } from '../src/core/index.ts';
import { jsonActionInterpreter } from '../src/testing/index.ts';

/** Steps between two readings. */
export const LONG_SLICE = 10_000;

/** What a runtime can read at a slice boundary. */
export type LongProbe = {
  /** Heap in use after a forced full GC, in bytes; `null` where the runtime does not show it. */
  heap(): Promise<number | null>;
  /** Bytes of the run's records the store has written since the last call (read from the store). */
  storedSince(): Promise<number>;
};

/** One slice boundary: the figures of the slice that ends there. */
export type LongSlice = {
  /** Steps done when the reading was taken (model calls made). */
  readonly steps: number;
  readonly usPerStep: number;
  readonly heapBytes: number | null;
  /** Bytes stored for the run so far. */
  readonly storedBytes: number;
  /** Time the readings took (not counted in any slice). */
  readonly probeMs: number;
};

/** The figures of a whole long run, before its resume. */
export type LongFigures = {
  readonly steps: number;
  readonly slices: readonly LongSlice[];
  /** Heap bytes per step between the reading at 2 slices and the last one: ~0 when heap is flat. */
  readonly heapSlope: number | null;
  readonly storedBytes: number;
};

/** How the model's replies go: `crashAt` is the call at which a resume is timed (see {@link longModel}). */
export type LongModelOptions = {
  /** Steps of the run: calls 0 … n−2 ask for the tool, call n−1 answers. */
  readonly n: number;
  readonly probe: LongProbe;
  /** Called at every call, before the reply (awaited when it returns a promise): a resume times itself with it. */
  readonly onCall?: (callSeq: number) => undefined | Promise<void>;
  /** Collects the slices; a resumed run passes none. */
  readonly slices?: LongSlice[];
  /** Steps a slice (default {@link LONG_SLICE}): smaller for a quick run. */
  readonly every?: number;
};

/** The text of the last message the model was handed, or '' (the prefix ends with the goal). */
function lastText(messages: ModelCallMessages): string {
  const part = messages.at(-1)?.content.at(-1);
  return part?.type === 'text' ? part.text : '';
}
type ModelCallMessages = Parameters<ModelCaller['call']>[0]['messages'];

/**
 * A model that looks only at the last message: it reads the counter the tool echoed (`ok 41`)
 * and asks for the next one, so the whole history may be handed to it or only a window of it.
 * At every {@link LONG_SLICE}-th call it takes the slice's readings, outside the slice's time.
 */
export function longModel(opts: LongModelOptions): ModelCaller {
  let sliceStart = -1;
  let stored = 0;
  const every = opts.every ?? LONG_SLICE;
  return {
    params: Object.freeze({ model: 'bench-long' }),
    async call({ callSeq, messages }) {
      const hooked = opts.onCall?.(callSeq);
      if (hooked) await hooked;
      const slices = opts.slices;
      if (slices && sliceStart < 0) sliceStart = performance.now();
      if (slices && callSeq > 0 && callSeq % every === 0) {
        const ended = performance.now();
        const heapBytes = await opts.probe.heap();
        stored += await opts.probe.storedSince();
        const usPerStep = ((ended - sliceStart) * 1000) / every;
        sliceStart = performance.now();
        slices.push({ steps: callSeq, usPerStep, heapBytes, storedBytes: stored, probeMs: sliceStart - ended });
      }
      const seen = /^(?:Observation:\n)?ok (\d+)$/.exec(lastText(messages));
      const next = seen ? Number(seen[1]) + 1 : 0;
      if (seen && next !== callSeq) throw new Error(`the model saw counter ${next - 1} at call ${callSeq}`);
      const text = callSeq < opts.n - 1 ? `{"tool":"count","args":{"i":${callSeq}}}` : '{"final":"done"}';
      return { callId: `c${callSeq}`, text, reasoning: null };
    },
  };
}

const SILENT: EventSink = { params: Object.freeze({ sink: 'null' }), deliver: () => undefined };
const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } as const;

/** The agent of the long run on `store`. */
export function longAgent(store: RunStore, model: ModelCaller): AgentDefinition {
  return defineAgent({
    model,
    interpreter: jsonActionInterpreter(),
    store,
    events: SILENT,
    syntheticObservations: SYNTHETIC,
  });
}

const TOOLS = ToolRegistry.of([
  {
    name: 'count',
    description: 'Echoes the counter it is given.',
    parameters: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] },
    replayPolicy: 'safe',
    completesRun: false,
    handler: (args) => Promise.resolve(`ok ${String(args['i'])}`),
  },
]);
const EXECUTOR = TOOLS.executor();

/** Steps of history the model is handed and the run keeps in memory (`historyWindow`). */
export const LONG_WINDOW = 10;

/**
 * The request of an `n`-step long run: the prompt is kept bounded by `historyWindow` (the prefix
 * and the last {@link LONG_WINDOW} steps); the budget's context limit is set out of reach so that
 * nothing but the step count ends the run.
 */
export function longRequest(runId: string, n: number): RunRequest {
  return {
    runId,
    historyWindow: { steps: LONG_WINDOW },
    budget: { maxSteps: n + 1, maxValidActions: n + 1, maxContextChars: Number.MAX_SAFE_INTEGER },
    executor: EXECUTOR,
    tools: TOOLS,
    context: {
      run: [{ role: 'system', content: [{ type: 'text', text: 'You call count until you are done.' }] }],
      goal: [{ role: 'user', content: [{ type: 'text', text: 'Count.' }] }],
    },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation:\n{observation}',
    toolRenderStyle: 'json',
    cancelGraceMs: 1000,
  };
}

/** The figures of a finished long run: its slices, the heap slope after warm-up, bytes stored. */
export function longFigures(steps: number, slices: readonly LongSlice[]): LongFigures {
  const from = slices[1];
  const to = slices.at(-1);
  const heapSlope =
    from && to && to !== from && from.heapBytes !== null && to.heapBytes !== null
      ? (to.heapBytes - from.heapBytes) / (to.steps - from.steps)
      : null;
  return { steps, slices, heapSlope, storedBytes: to?.storedBytes ?? 0 };
}

/** Bytes of `text` in UTF-8 (what a file, a SQLite TEXT column or Postgres' octet_length counts). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Where a long run is cut: `n` steps are done, the model intent of step `n` has landed. */
export type LongRunOptions = {
  readonly store: RunStore;
  readonly runId: string;
  readonly n: number;
  readonly probe: LongProbe;
  readonly every?: number;
};

/**
 * Run `n` action steps of an (n + 2)-step run, then "crash": the store accepts the run's first
 * 3n + 2 writes (`run_started`, per action step its model intent, model result + action intent
 * and step record, then step n's model intent; decision 0040) and refuses every later one, as a
 * process that died would. Returns the slices read on the way.
 */
export async function crashedLongRun(opts: LongRunOptions): Promise<LongFigures> {
  const slices: LongSlice[] = [];
  const every = opts.every ?? LONG_SLICE;
  const crashing = crashAfter(opts.store, 3 * opts.n + 2);
  const model = longModel({ n: opts.n + 2, probe: opts.probe, slices, every });
  const outcome = await run(longAgent(crashing.store, model), longRequest(opts.runId, opts.n + 2)).then(
    (r) => `ended ${r.stopReason} after ${r.steps} steps: ${r.error ?? 'no error'}`,
    () => null,
  );
  if (outcome !== null || !crashing.crashed()) throw new Error(`the long run did not crash (${outcome})`);
  return longFigures(opts.n, slices);
}

/** The store methods that write (the optional ones included), as the test kit's faultyStore counts them. */
const WRITES = new Set([
  'runStarted',
  'intent',
  'result',
  'step',
  'runEnded',
  'resultAndIntent',
  'inputRequest',
  'input',
  'upgrade',
  'callResult',
  'resumed',
]);

/**
 * `inner` behind a proxy whose writes after the first `writes` reject without landing. Unlike
 * the test kit's `faultyStore`, it keeps a count, not a list of the writes: over 100,000 steps
 * that list would be 300,000 objects of the bench's own on the heap being measured.
 */
function crashAfter(inner: RunStore, writes: number): { store: RunStore; crashed(): boolean } {
  let landed = 0;
  let crashed = false;
  const store = new Proxy(inner, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (typeof key !== 'string' || !WRITES.has(key)) return method.bind(target);
      return async (...args: unknown[]) => {
        if (crashed || landed >= writes) {
          crashed = true;
          throw new Error(`simulated crash before ${key} (after ${writes} writes)`);
        }
        await method.apply(target, args);
        landed++;
      };
    },
  });
  return { store, crashed: () => crashed };
}

/** What {@link resumeLong} measured. */
export type ResumeReading = { readonly ms: number; readonly heapBytes: number | null };

/**
 * Resume the crashed run on `store` (a fresh store over the same storage): the time until the
 * model is called again for step `n` (re-issued: `modelReplayPolicy: 'safe'`), and the heap
 * after a forced GC at that moment. The resumed run then ends with its final answer.
 */
export async function resumeLong(opts: LongRunOptions): Promise<ResumeReading> {
  let at = -1;
  let heapBytes: number | null = null;
  const onCall = async (callSeq: number): Promise<void> => {
    if (callSeq !== opts.n || at >= 0) return;
    at = performance.now();
    heapBytes = await opts.probe.heap();
  };
  const model = longModel({ n: opts.n + 2, probe: opts.probe, onCall });
  const t0 = performance.now();
  const result = await resume(longAgent(opts.store, model), longRequest(opts.runId, opts.n + 2));
  if (at < 0 || result.stopReason !== 'final_answer')
    throw new Error(`resume did not re-issue call ${opts.n} (${result.stopReason})`);
  return { ms: at - t0, heapBytes };
}
