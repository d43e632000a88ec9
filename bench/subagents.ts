/**
 * Section `subagents` of `npm run bench`: a tool that runs another agent as a durable child run
 * (`agentTool`, src/core/agent-tool.ts), each figure next to a floor sampled in alternation.
 * - Cost of a sub-agent call: a parent step whose tool runs a child that answers at once (one child
 *   step), against the same parent step with a plain tool returning the same text plus the child's
 *   run by itself; what is left is the sub-agent machinery. CPU time on InMemoryStore, then elapsed
 *   time on FileStore (real fsyncs).
 * - Ten children in one step (`parallelToolCalls: 10`), each with a 20 ms model, against one child.
 * - Resume of a parent paused on its child's approval, until both end, against a one-level run
 *   paused on its own approval.
 * @module
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeToolInterpreter } from '../src/adapters/tool-interpreter.ts';
import { agentTool, defineAgent, InMemoryStore, resume, run, ToolRegistry } from '../src/core/index.ts';
import type {
  AgentDefinition,
  ModelCall,
  ModelCaller,
  ModelReply,
  RunResult,
  RunStore,
  ToolSpec,
} from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { nullSink } from './fixtures.ts';
import { freshId, row, sampleAll } from './kernel.ts';
import type { Plan, Row } from './kernel.ts';
import { sleep } from '../src/testing/scripted-model.ts';

const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } as const;
/** The child's final answer, and what the plain tool of the floor returns. */
const ANSWER = 'the answer is 42';
const CHILD_MS = 20;
const CHILDREN = 10;
const SECTION = 'subagents';

/** A stateless model: reply `seq` is `script(seq)`; `delayMs` > 0 waits that long first (honouring its signal). */
function model(script: (seq: number) => ModelReply, delayMs = 0): ModelCaller {
  return {
    params: Object.freeze({ model: `bench-subagents-${delayMs}ms` }),
    call(call: ModelCall): Promise<ModelReply> {
      const reply = script(call.callSeq);
      if (delayMs === 0) return Promise.resolve(reply);
      return sleep(delayMs, call.signal).then(() => reply);
    },
  };
}

const answer = (seq: number, text: string): ModelReply => ({ callId: `m${seq}`, text, reasoning: null });
const calling = (seq: number, name: string, count: number): ModelReply => ({
  ...answer(seq, ''),
  toolCalls: Array.from({ length: count }, (_, j) => ({ id: `c${seq}.${j}`, name, arguments: { q: `${seq}.${j}` } })),
});

/** A parent's shape: `steps` steps of `perStep` calls to `ask` each, then its answer. */
type Shape = { readonly steps: number; readonly perStep: number };

function defaultsOf(tools: ToolRegistry, steps: number, parallel = 1) {
  return {
    tools,
    executor: tools.executor(),
    budget: { maxSteps: steps + 1, maxValidActions: steps * parallel + 1, maxContextChars: Number.MAX_SAFE_INTEGER },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe' as const,
    observationTemplate: '{observation}',
    toolRenderStyle: 'none' as const,
    cancelGraceMs: 1000,
    ...(parallel > 1 ? { parallelToolCalls: parallel } : {}),
  };
}

/** The child's one tool: a note a person approves first (the resume figure). */
const NOTE: ToolSpec = {
  name: 'note',
  description: 'Writes a note, once a person approves it.',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  replayPolicy: 'never',
  needsApproval: true,
  handler: (args) => Promise.resolve(`noted ${String(args['q'])}`),
};
const CHILD_TOOLS = ToolRegistry.of([NOTE]);

/** The child: answers at once, or (`approval`) first calls `note`, which waits for a person. */
function childAgent(store: RunStore, approval: boolean, delayMs = 0): AgentDefinition {
  const script = (seq: number): ModelReply => (approval && seq === 0 ? calling(seq, 'note', 1) : answer(seq, ANSWER));
  return defineAgent({
    model: model(script, delayMs),
    interpreter: nativeToolInterpreter('bench'),
    store,
    events: nullSink,
    syntheticObservations: SYNTHETIC,
    defaults: defaultsOf(CHILD_TOOLS, 2),
  });
}

const ASK_PARAMETERS = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } as const;

/** The parent's `ask` tool: runs `child` as a sub-agent, or (no child: the floor) returns the same text. */
function askTool(child: AgentDefinition | null): ToolSpec {
  const base = { name: 'ask', description: 'Asks a question.', parameters: ASK_PARAMETERS };
  if (child) return agentTool({ ...base, agent: child, request: (args) => ({ goal: `Answer ${String(args['q'])}` }) });
  return { ...base, replayPolicy: 'safe', handler: () => Promise.resolve(ANSWER) };
}

function parentAgent(store: RunStore, child: AgentDefinition | null, shape: Shape): AgentDefinition {
  const tools = ToolRegistry.of([askTool(child)]);
  const script = (seq: number): ModelReply =>
    seq < shape.steps ? calling(seq, 'ask', shape.perStep) : answer(seq, 'parent done');
  return defineAgent({
    model: model(script),
    interpreter: nativeToolInterpreter('bench'),
    store,
    events: nullSink,
    syntheticObservations: SYNTHETIC,
    defaults: defaultsOf(tools, shape.steps, shape.perStep),
  });
}

/** Throw unless `r` ended with its answer after `steps` steps, each call observing the child's answer. */
function checkParent(r: RunResult, shape: Shape): void {
  const answered = r.trajectory
    .flatMap((s) => (s.calls ? s.calls.map((c) => c.observation) : [s.observation]))
    .filter((o) => o === ANSWER).length;
  if (r.stopReason !== 'final_answer' || r.steps !== shape.steps + 1 || answered !== shape.steps * shape.perStep)
    throw new Error(`bench parent ended ${r.stopReason} after ${r.steps} steps, ${answered} answers`);
}

/** Elapsed time, ms. */
const wallMs = (): number => performance.now();
/** CPU time of the process, ms (user + system): the work done, which a loaded machine stretches less. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Ms for `reps` parent runs of `shape`, one after another, each checked. */
async function parentMs(agent: AgentDefinition, shape: Shape, reps: number, clock: () => number): Promise<number> {
  const ids = Array.from({ length: reps }, () => freshId('sub'));
  const t0 = clock();
  for (const runId of ids) checkParent(await run(agent, { runId, goal: 'Ask.' }), shape);
  return clock() - t0;
}

function checkChild(r: RunResult): void {
  if (r.finalAnswer !== ANSWER) throw new Error(`bench child ended ${r.stopReason} after ${r.steps} steps`);
}

/** Ms for `reps` runs of the child by itself, as the sub-agent tool starts it (its answer checked). */
async function childMs(agent: AgentDefinition, reps: number, clock: () => number): Promise<number> {
  const ids = Array.from({ length: reps }, () => freshId('child'));
  const t0 = clock();
  for (const runId of ids) checkChild(await run(agent, { runId, goal: 'Answer 0.0' }));
  return clock() - t0;
}

/** Per-sample `a − (b + c)`: samples of one round were taken under the same load. */
const minus = (a: number[], b: number[], c: number[]): number[] => a.map((x, i) => x - (b[i] ?? 0) - (c[i] ?? 0));
const plus = (b: number[], c: number[]): number[] => b.map((x, i) => x + (c[i] ?? 0));

type CostSetup = {
  readonly store: () => RunStore;
  readonly clock: () => number;
  readonly calls: number;
  readonly reps: number;
  /** What the row's unit makes of the ms `n` calls took. */
  readonly per: (ms: number, n: number) => number;
  readonly label: string;
  readonly unit: string;
  readonly how: string;
};

/** Cost of a sub-agent call: the call, a plain tool's step, the child alone, and what is left. */
async function callCost(plan: Plan, s: CostSetup): Promise<Row[]> {
  const shape: Shape = { steps: s.calls, perStep: 1 };
  const n = s.calls * s.reps;
  const sub = async (): Promise<number> => {
    const store = s.store();
    return s.per(await parentMs(parentAgent(store, childAgent(store, false), shape), shape, s.reps, s.clock), n);
  };
  const plain = async (): Promise<number> =>
    s.per(await parentMs(parentAgent(s.store(), null, shape), shape, s.reps, s.clock), n);
  const alone = async (): Promise<number> => s.per(await childMs(childAgent(s.store(), false), n, s.clock), n);
  const [a = [], b = [], c = []] = await sampleAll([sub, plain, alone], plan);
  const each = `${s.how}; each sample: ${s.reps} parent run${s.reps === 1 ? '' : 's'} of ${s.calls} calls`;
  return [
    row(
      SECTION,
      `a sub-agent call (parent step + child run), ${s.label}`,
      s.unit,
      { a, b: plus(b, c) },
      `${each}; floor: the next two rows added`,
    ),
    row(SECTION, `floor: the parent step with a plain tool (same text), ${s.label}`, s.unit, { a: b, b: null }, each),
    row(
      SECTION,
      `floor: the child's run of one step by itself, ${s.label}`,
      s.unit,
      { a: c, b: null },
      `${s.how}; ${n} runs a sample`,
    ),
    row(
      SECTION,
      `sub-agent machinery: call − (plain step + child alone), ${s.label}`,
      s.unit,
      { a: minus(a, b, c), b: null },
      'median of the per-sample differences',
    ),
  ];
}

/** How many fsyncs (`FileHandle.sync`: logs and directories alike) `fn` makes; `dir` is any directory. */
async function fsyncsOf(dir: string, fn: () => Promise<unknown>): Promise<number> {
  const fh = await open(dir, 'r');
  const proto = Object.getPrototypeOf(fh) as { sync: FileHandle['sync'] };
  await fh.close();
  const original = proto.sync;
  let count = 0;
  proto.sync = function (this: FileHandle): Promise<void> {
    count++;
    return original.call(this);
  };
  try {
    await fn();
  } finally {
    proto.sync = original;
  }
  return count;
}

/** The fsyncs of a sub-agent call on FileStore, against a plain tool's step and the child alone: counted, not timed. */
async function fsyncRow(dir: string, calls: number): Promise<Row> {
  const shape: Shape = { steps: calls, perStep: 1 };
  const store = new FileStore({ dir });
  const sub = parentAgent(store, childAgent(store, false), shape);
  const perCall = async (fn: () => Promise<unknown>): Promise<number> => (await fsyncsOf(dir, fn)) / calls;
  const a = await perCall(() => parentMs(sub, shape, 1, wallMs));
  const b = await perCall(() => parentMs(parentAgent(store, null, shape), shape, 1, wallMs));
  const c = await perCall(() => childMs(childAgent(store, false), calls, wallMs));
  return row(
    SECTION,
    'fsyncs of a sub-agent call, FileStore',
    'fsyncs/call',
    { a: [a], b: [b + c] },
    `counted in a parent run of ${calls} calls (logs and the directory); floor: plain step + child alone`,
  );
}

/** Figures 1 and 2: a sub-agent call's cost, CPU time on InMemoryStore and elapsed time on FileStore. */
async function callCosts(plan: Plan): Promise<Row[]> {
  const memory = await callCost(plan, {
    store: () => new InMemoryStore(),
    clock: cpuMs,
    calls: 20,
    reps: plan.quick ? 1 : 4,
    per: (ms, n) => (ms * 1000) / n,
    label: 'InMemoryStore',
    unit: 'µs/call',
    how: 'CPU time, instant models',
  });
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-subagents-'));
  try {
    const file = await callCost(plan, {
      store: () => new FileStore({ dir }),
      clock: wallMs,
      calls: plan.quick ? 2 : 5,
      reps: 1,
      per: (ms, n) => ms / n,
      label: 'FileStore',
      unit: 'ms/call',
      how: 'elapsed time, instant models',
    });
    return [...memory, ...file, await fsyncRow(dir, 5)];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Figure 3: ten children in one step (`parallelToolCalls` 10), each child's model taking 20 ms,
 * against one child (floor); and one child against its model's own time.
 */
async function tenChildren(plan: Plan): Promise<Row[]> {
  const reps = plan.quick ? 1 : 3;
  const parentRun = (perStep: number) => async (): Promise<number> => {
    const store = new InMemoryStore();
    const shape: Shape = { steps: 1, perStep };
    const agent = parentAgent(store, childAgent(store, false, CHILD_MS), shape);
    return (await parentMs(agent, shape, reps, wallMs)) / reps;
  };
  const modelAlone = async (): Promise<number> => {
    const signal = new AbortController().signal;
    const t0 = wallMs();
    for (let i = 0; i < reps; i++) await sleep(CHILD_MS, signal);
    return (wallMs() - t0) / reps;
  };
  const [ten = [], one = [], timer = []] = await sampleAll([parentRun(CHILDREN), parentRun(1), modelAlone], plan);
  const each = `elapsed time, instant parent model; each sample: ${reps} run${reps === 1 ? '' : 's'}`;
  return [
    row(
      SECTION,
      `${CHILDREN} children in one step (parallelToolCalls ${CHILDREN}), ${CHILD_MS} ms child model, InMemoryStore`,
      'ms',
      { a: ten, b: one },
      `${each}; floor: one child (next row)`,
    ),
    row(
      SECTION,
      `one child, ${CHILD_MS} ms child model, InMemoryStore`,
      'ms',
      { a: one, b: timer },
      `${each}; floor: the child's model alone (a ${CHILD_MS} ms timer)`,
    ),
  ];
}

/** `reps` runs of `agent` paused on an approval (not timed), then the CPU ms of resuming each with its approval. */
async function resumeMs(agent: AgentDefinition, reps: number, check: (r: RunResult) => void): Promise<number> {
  const paused: { runId: string; resultId: string }[] = [];
  for (let i = 0; i < reps; i++) {
    const runId = freshId('paused');
    const r = await run(agent, { runId, goal: 'Ask.' });
    if (r.stopReason !== 'awaiting_input' || !r.pending) throw new Error(`bench run did not pause: ${r.stopReason}`);
    paused.push({ runId, resultId: r.pending.resultId });
  }
  const t0 = cpuMs();
  for (const { runId, resultId } of paused) {
    check(await resume(agent, runId, { input: { kind: 'approve', resultId } }));
  }
  return cpuMs() - t0;
}

/**
 * Figure 4: resume of a parent paused on its child's approval against a one-level run paused on its
 * own. Both resume paths are first taken a few hundred times outside the samples: CPU time counts
 * V8's compiler threads too, and the parent's path (two resumes, the reply carried down) is still
 * being optimised long after the sampling's one warm-up round.
 */
async function resumes(plan: Plan): Promise<Row[]> {
  const reps = plan.quick ? 10 : 50;
  const shape: Shape = { steps: 1, perStep: 1 };
  const parent = (n: number) => async (): Promise<number> => {
    const store = new InMemoryStore();
    const agent = parentAgent(store, childAgent(store, true), shape);
    return ((await resumeMs(agent, n, (r) => checkParent(r, shape))) * 1000) / n;
  };
  const oneLevel = (n: number) => async (): Promise<number> => {
    const agent = childAgent(new InMemoryStore(), true);
    return ((await resumeMs(agent, n, checkChild)) * 1000) / n;
  };
  const warm = plan.quick ? 0 : 200;
  if (warm > 0) {
    await parent(warm)();
    await oneLevel(warm)();
  }
  const [p = [], o = []] = await sampleAll([parent(reps), oneLevel(reps)], plan);
  return [
    row(
      SECTION,
      "resume of a parent paused on its child's approval, until both end, InMemoryStore",
      'µs/resume',
      { a: p, b: o },
      `CPU time, instant models; floor: a one-level run paused on its own approval (the child alone); each sample: ${reps} resumes after ${warm} of each unsampled`,
    ),
  ];
}

/** Section `subagents`: a sub-agent call's cost, ten children at once, resume through a child. */
export async function subagents(plan: Plan): Promise<Row[]> {
  return [...(await callCosts(plan)), ...(await tenChildren(plan)), ...(await resumes(plan))];
}
