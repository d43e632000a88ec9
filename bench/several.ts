/**
 * Section `several` of `npm run bench`: several tool calls in one step (`parallelToolCalls`,
 * docs/design/step.md#several-calls-a-step), each figure next to a floor sampled in alternation.
 * - Round trips saved: 5 independent `read` calls with a 20 ms model on FileStore, in one step
 *   (2 model calls) and in five one-call steps (6 model calls); floor: the model's own time.
 * - Kernel cost per call (CPU time): an instant model on InMemoryStore, calls 5 a step and 1 a step; floor:
 *   a hand-written loop making the same model and tool calls with no library.
 * - Concurrency honoured: 5 calls of a 30 ms tool at `parallelToolCalls` 5, 2 and 1 (one-call
 *   steps); floor: the same handler called directly, as many at once.
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeToolInterpreter } from '../src/adapters/tool-interpreter.ts';
import { defineAgent, InMemoryStore, run, ToolRegistry } from '../src/core/index.ts';
import type {
  AgentDefinition,
  ContentBlock,
  JsonObject,
  Message,
  ModelCall,
  ModelCaller,
  ModelReply,
  RunRequest,
  RunStore,
  ToolContext,
  ToolHandler,
} from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { GOAL, nullSink, SYSTEM } from './fixtures.ts';
import { freshId, row, sampleAll } from './kernel.ts';
import type { Plan, Row } from './kernel.ts';
import { sleep } from '../src/testing/scripted-model.ts';

const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } as const;
/** How many calls every task makes. */
const CALLS = 5;
const MODEL_MS = 20;
const TOOL_MS = 30;

const readTool: ToolHandler = (args) => Promise.resolve(`read ${String(args['x'])}`);
const waitTool: ToolHandler = async (args, ctx) => {
  await sleep(TOOL_MS, ctx.signal);
  return `waited ${String(args['x'])}`;
};
const HANDLERS: Readonly<Record<string, ToolHandler>> = { read: readTool, wait: waitTool };
const TOOLS = ToolRegistry.of(
  Object.entries(HANDLERS).map(([name, handler]) => ({
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] },
    replayPolicy: 'safe' as const,
    handler,
  })),
);
const EXECUTOR = TOOLS.executor();

/** Reply `seq` of a task of `total` calls to `tool`, `perStep` a reply, then the answer. */
function replyAt(seq: number, tool: string, total: number, perStep: number): ModelReply {
  const done = seq * perStep;
  if (done >= total) return { callId: `m${seq}`, text: 'done', reasoning: null };
  const toolCalls = Array.from({ length: Math.min(perStep, total - done) }, (_, j) => ({
    id: `c${done + j}`,
    name: tool,
    arguments: { x: String(done + j) },
  }));
  return { callId: `m${seq}`, text: '', reasoning: null, toolCalls };
}

/** A stateless model of that task; `delayMs` > 0: each call waits that long first (a timer honouring its signal). */
function callsModel(tool: string, total: number, perStep: number, delayMs = 0): ModelCaller {
  return {
    params: Object.freeze({ model: `bench-calls-${delayMs}ms` }),
    call(call: ModelCall): Promise<ModelReply> {
      const reply = replyAt(call.callSeq, tool, total, perStep);
      if (delayMs === 0) return Promise.resolve(reply);
      return sleep(delayMs, call.signal).then(() => reply);
    },
  };
}

/** One task: `total` calls to `tool`, `perStep` a step, at most `parallel` at once. */
type Task = { readonly tool: string; readonly total: number; readonly perStep: number; readonly parallel: number };
const modelCalls = (t: Task): number => Math.ceil(t.total / t.perStep) + 1;

function taskAgent(store: RunStore, t: Task, delayMs = 0): AgentDefinition {
  return defineAgent({
    model: callsModel(t.tool, t.total, t.perStep, delayMs),
    interpreter: nativeToolInterpreter('bench'),
    store,
    events: nullSink,
    syntheticObservations: SYNTHETIC,
  });
}

function taskRequest(runId: string, t: Task): RunRequest {
  return {
    runId,
    budget: { maxSteps: modelCalls(t) + 1, maxValidActions: t.total + 1, maxContextChars: Number.MAX_SAFE_INTEGER },
    executor: EXECUTOR,
    tools: TOOLS,
    context: { run: [SYSTEM], goal: [GOAL] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1000,
    ...(t.parallel > 1 ? { parallelToolCalls: t.parallel } : {}),
  };
}

/** Elapsed time, ms. */
const wallMs = (): number => performance.now();
/**
 * CPU time of the process, ms (user + system, all its threads): where no call waits for I/O or a
 * timer, the work done, which a machine shared with other busy processes stretches less than the
 * time that passes.
 */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Ms for `reps` runs of the task, one after another, each checked to have made every call. */
async function kernelMs(agent: AgentDefinition, t: Task, reps: number, clock = wallMs): Promise<number> {
  const requests = Array.from({ length: reps }, () => taskRequest(freshId('sev'), t));
  const t0 = clock();
  for (const req of requests) {
    const r = await run(agent, req);
    if (r.stopReason !== 'final_answer' || r.steps !== modelCalls(t) || r.validActions !== t.total)
      throw new Error(`bench run ended ${r.stopReason} after ${r.steps} steps, ${r.validActions} calls`);
  }
  return clock() - t0;
}

const CALL_BASE = { runId: 'floor', binding: {}, tools: [], signal: new AbortController().signal } as const;
const toolContext = (resultId: string): ToolContext => ({ ...CALL_BASE, stepIndex: 0, resultId });

/** Run `tasks` at most `width` at a time (what the kernel's step does with its calls). */
async function pool(tasks: readonly (() => Promise<string>)[], width: number): Promise<string[]> {
  const out: string[] = new Array(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < tasks.length; i = next++) out[i] = await (tasks[i] as () => Promise<string>)();
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
  return out;
}

/**
 * The floor of a task: call the model with the conversation so far, run its calls (at most
 * `parallel` at once) through the handlers directly, append the assistant turn and one user turn
 * of tool results — no records, no events, no validation. Returns the answer.
 */
async function floorTask(model: ModelCaller, t: Task): Promise<string> {
  const messages: Message[] = [SYSTEM, GOAL];
  for (let seq = 0; ; seq++) {
    const reply = await model.call({ ...CALL_BASE, messages, callSeq: seq, resultId: `s${seq}.model` });
    const calls = reply.toolCalls ?? [];
    if (calls.length === 0) return reply.text;
    const handler = HANDLERS[t.tool] as ToolHandler;
    const tasks = calls.map((c, j) => () => handler(c.arguments as JsonObject, toolContext(`s${seq}.a${j}`)));
    const observations = await pool(tasks, t.parallel);
    const asked: ContentBlock[] = calls.map((c) => ({
      type: 'tool_call',
      id: c.id,
      name: c.name,
      arguments: c.arguments,
    }));
    const answered: ContentBlock[] = calls.map((c, j) => ({
      type: 'tool_result',
      toolCallId: c.id,
      text: observations[j] ?? '',
    }));
    messages.push({ role: 'assistant', content: asked }, { role: 'user', content: answered });
  }
}

async function floorMs(model: ModelCaller, t: Task, reps: number, clock = wallMs): Promise<number> {
  const t0 = clock();
  for (let i = 0; i < reps; i++) await floorTask(model, t);
  return clock() - t0;
}

/** The ratio of two rows' medians, kernel and floor alike. */
function ratioRow(name: string, over: Row, under: Row, note: string): Row {
  return {
    section: 'several',
    name,
    unit: '×',
    value: over.value / under.value,
    floor: over.floor !== null && under.floor !== null ? over.floor / under.floor : null,
    samples: [],
    floorSamples: [],
    note,
  };
}

const pair = (a: number[], b: number[]): { a: number[]; b: number[] } => ({ a, b });
const runs = (n: number): string => `${n} run${n === 1 ? '' : 's'}`;

const perReps =
  (fn: () => Promise<number>, reps: number): (() => Promise<number>) =>
  async () =>
    (await fn()) / reps;

/**
 * Round trips saved: the 5 reads in one step vs in five one-call steps, with a 20 ms model on
 * FileStore. Floor: the model's own time, the same model called as often, one call after another.
 */
async function roundTrips(plan: Plan): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-several-'));
  try {
    const store = new FileStore({ dir });
    const reps = plan.quick ? 1 : 3;
    const wide: Task = { tool: 'read', total: CALLS, perStep: CALLS, parallel: CALLS };
    const narrow: Task = { tool: 'read', total: CALLS, perStep: 1, parallel: 1 };
    const modelTime = (t: Task) => async (): Promise<number> => {
      const model = callsModel(t.tool, t.total, t.perStep, MODEL_MS);
      const t0 = performance.now();
      for (let i = 0; i < reps; i++)
        for (let seq = 0; seq < modelCalls(t); seq++)
          await model.call({ ...CALL_BASE, messages: [], callSeq: seq, resultId: `s${seq}.model` });
      return (performance.now() - t0) / reps;
    };
    const [k5 = [], f5 = [], k1 = [], f1 = []] = await sampleAll(
      [
        perReps(() => kernelMs(taskAgent(store, wide, MODEL_MS), wide, reps), reps),
        modelTime(wide),
        perReps(() => kernelMs(taskAgent(store, narrow, MODEL_MS), narrow, reps), reps),
        modelTime(narrow),
      ],
      plan,
    );
    const note = (t: Task): string =>
      `${modelCalls(t)} model calls of ${MODEL_MS} ms; floor: the model's own time; each sample: ${runs(reps)}`;
    const one = row(
      'several',
      `${CALLS} reads, one step (parallelToolCalls ${CALLS}), FileStore`,
      'ms',
      pair(k5, f5),
      note(wide),
    );
    const five = row('several', `${CALLS} reads, ${CALLS} one-call steps, FileStore`, 'ms', pair(k1, f1), note(narrow));
    return [
      one,
      five,
      ratioRow(
        'round trips saved: wall time in one-call steps ÷ in one step',
        five,
        one,
        'floor: the model alone, 6 calls ÷ 2',
      ),
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Kernel cost per call: an instant model on InMemoryStore, 5 calls a step vs one call a step. */
async function perCall(plan: Plan): Promise<Row[]> {
  const total = CALLS * (plan.quick ? 40 : 200);
  const reps = plan.quick ? 2 : 5;
  const wide: Task = { tool: 'read', total, perStep: CALLS, parallel: CALLS };
  const narrow: Task = { tool: 'read', total, perStep: 1, parallel: 1 };
  const us = (ms: number): number => (ms * 1000) / (total * reps);
  const kernel = (t: Task) => async (): Promise<number> =>
    us(await kernelMs(taskAgent(new InMemoryStore(), t), t, reps, cpuMs));
  const floor = (t: Task) => async (): Promise<number> =>
    us(await floorMs(callsModel(t.tool, t.total, t.perStep), t, reps, cpuMs));
  const [k5 = [], f5 = [], k1 = [], f1 = []] = await sampleAll(
    [kernel(wide), floor(wide), kernel(narrow), floor(narrow)],
    plan,
  );
  const note = (steps: number): string =>
    `CPU time; runs of ${steps} steps + the answer; floor: the same calls, no library; each sample: ${runs(reps)}`;
  const inStep = row(
    'several',
    `per call, ${CALLS} calls a step, InMemoryStore`,
    'µs/call',
    { a: k5, b: f5 },
    note(total / CALLS),
  );
  const alone = row('several', 'per call, one call a step, InMemoryStore', 'µs/call', { a: k1, b: f1 }, note(total));
  return [
    inStep,
    alone,
    ratioRow(`a call in a ${CALLS}-call step ÷ a call in its own step`, inStep, alone, 'kernel cost, per call'),
  ];
}

/** Concurrency honoured: 5 calls of a 30 ms tool at parallelToolCalls 5, 2 and 1 (one-call steps). */
async function concurrencyHonoured(plan: Plan): Promise<Row[]> {
  const tasks: Task[] = [
    { tool: 'wait', total: CALLS, perStep: CALLS, parallel: CALLS },
    { tool: 'wait', total: CALLS, perStep: CALLS, parallel: 2 },
    { tool: 'wait', total: CALLS, perStep: 1, parallel: 1 },
  ];
  const fns = tasks.flatMap((t) => [
    () => kernelMs(taskAgent(new InMemoryStore(), t), t, 1),
    () => floorMs(callsModel(t.tool, t.total, t.perStep), t, 1),
  ]);
  const samples = await sampleAll(fns, plan);
  return tasks.map((t, i) => {
    const waves = Math.ceil(t.total / t.parallel);
    const how = t.perStep === 1 ? `${t.total} one-call steps` : `one step, parallelToolCalls ${t.parallel}`;
    return row(
      'several',
      `${t.total} calls of a ${TOOL_MS} ms tool, ${how}, InMemoryStore`,
      'ms',
      { a: samples[2 * i] ?? [], b: samples[2 * i + 1] ?? [] },
      `instant model; floor: the handlers called directly, ${t.parallel} at once (${waves} × ${TOOL_MS} ms)`,
    );
  });
}

/** Section `several`: round trips saved, kernel cost per call, concurrency honoured. */
export async function several(plan: Plan): Promise<Row[]> {
  return [...(await roundTrips(plan)), ...(await perCall(plan)), ...(await concurrencyHonoured(plan))];
}
