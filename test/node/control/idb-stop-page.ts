/**
 * The page of the IndexedDB stop test (bundled with esbuild, opened in Chromium tabs of one
 * context): an agent on IndexedDBStore whose outside world is localStorage, which every tab of the
 * context shares and which outlives a closed tab: `model-calls` (the callSeq of each model call),
 * `saw` (what a slow model call's or tool's signal aborted with), `tool-runs` and `paid` (each run
 * of the slow tool and each payment made). A tab marks `data-waiting="model"` or `"tool"` on its
 * root element while its slow call waits. The test drives a tab through `globalThis.stopTab`.
 *
 * Scenarios (the goal names one; the script follows it):
 * - `model`: the first model call waits until its signal aborts, then the run would answer.
 * - `tool`: the `slow` tool (`never`) waits until its signal aborts.
 * - `approval`: `pay` needs a person's approval.
 */
import { defineAgent, requestStop, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { InputReply, LogRecord, ModelCall, RunResult, ToolSpec } from '../../../src/core/index.ts';
import { IndexedDBStore } from '../../../src/platform-web/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { defaultsFor, SYNTHETIC } from '../subagents/family.ts';

export const SCENARIOS = ['model', 'tool', 'approval'] as const;
export type Scenario = (typeof SCENARIOS)[number];

const SCRIPTS: Record<Scenario, readonly string[]> = {
  model: ['{"final":"answered"}'],
  tool: ['{"tool":"slow","args":{}}', '{"final":"done"}'],
  approval: ['{"tool":"pay","args":{"eur":40}}', '{"final":"paid"}'],
};

/** What a signal aborted with, as plain JSON. */
export type Saw = {
  readonly where: 'model' | 'tool';
  readonly name: string | undefined;
  readonly code: string | undefined;
  readonly stop: unknown;
};

/** The outside world the tabs share. */
export type World = {
  readonly modelCalls: number[];
  readonly saw: Saw[];
  readonly toolRuns: number;
  readonly paid: number[];
};

const read = <T>(key: string, empty: T): T => JSON.parse(localStorage.getItem(key) ?? 'null') ?? empty;
const push = (key: string, value: unknown): void =>
  localStorage.setItem(key, JSON.stringify([...read<unknown[]>(key, []), value]));

/** Waits until `signal` aborts, writes what it aborted with to `saw`, and rejects with it. */
function waitForAbort(signal: AbortSignal, where: Saw['where']): Promise<never> {
  document.documentElement.dataset['waiting'] = where;
  return new Promise<never>((_resolve, reject) => {
    const done = (): void => {
      const why = signal.reason as { name?: string; code?: string; stop?: unknown };
      push('saw', { where, name: why?.name, code: why?.code, stop: why?.stop } satisfies Saw);
      reject(signal.reason);
    };
    if (signal.aborted) done();
    else signal.addEventListener('abort', done, { once: true });
  });
}

const store = new IndexedDBStore({ dbName: 'polyloop-stop-tabs' });

const slow: ToolSpec = {
  name: 'slow',
  description: 'Takes its time.',
  parameters: { type: 'object', properties: {} },
  replayPolicy: 'never',
  handler: (_args, ctx) => {
    localStorage.setItem('tool-runs', String(read<number>('tool-runs', 0) + 1));
    return waitForAbort(ctx.signal, 'tool');
  },
};
const pay: ToolSpec = {
  name: 'pay',
  description: 'Pay an amount (a person approves it first).',
  parameters: { type: 'object', properties: { eur: { type: 'number' } }, required: ['eur'] },
  replayPolicy: 'never',
  needsApproval: true,
  handler: (args) => {
    push('paid', args['eur']);
    return Promise.resolve('paid');
  },
};
const tools = ToolRegistry.of([slow, pay]);

/** The scenario a run is in: its goal names it. */
function scenarioOf(call: ModelCall): Scenario {
  // The goal is a message of text parts: search the messages whole.
  const text = JSON.stringify(call.messages);
  const found = SCENARIOS.find((s) => text.includes(`scenario ${s}`));
  if (found === undefined) throw new Error('the goal names no scenario');
  return found;
}

const agent = defineAgent({
  model: scriptedModel(async (call: ModelCall) => {
    push('model-calls', call.callSeq);
    const scenario = scenarioOf(call);
    if (scenario === 'model' && call.callSeq === 0) await waitForAbort(call.signal, 'model');
    const text = SCRIPTS[scenario][call.callSeq];
    if (text === undefined) throw new Error(`no reply for call ${call.callSeq} of ${scenario}`);
    return text;
  }),
  interpreter: jsonActionInterpreter(),
  store,
  events: { params: { sink: 'none' }, deliver: () => undefined },
  syntheticObservations: SYNTHETIC,
  defaults: defaultsFor(tools, { cancelGraceMs: 2_000 }),
});

/** What the test reads of a result: plain JSON. */
const summary = (r: RunResult) => ({
  stopReason: r.stopReason,
  finalAnswer: r.finalAnswer,
  stopRequest: r.stopRequest ?? null,
  pending: r.pending,
});

export type StopTab = {
  start(runId: string, scenario: Scenario): Promise<ReturnType<typeof summary>>;
  resume(runId: string, input?: InputReply): Promise<ReturnType<typeof summary>>;
  stop(runId: string, reason?: string): Promise<void>;
  log(runId: string): Promise<readonly LogRecord[]>;
  world(): World;
};

const tab: StopTab = {
  start: async (runId, scenario) =>
    summary(await run(agent, { runId, goal: `Play the stop test, scenario ${scenario}.` })),
  resume: async (runId, input) => summary(await resume(agent, runId, input ? { input } : {})),
  stop: (runId, reason) => requestStop(store, runId, reason),
  log: (runId) => store.readLog(runId),
  world: () => ({
    modelCalls: read('model-calls', []),
    saw: read('saw', []),
    toolRuns: read('tool-runs', 0),
    paid: read('paid', []),
  }),
};
(globalThis as { stopTab?: StopTab }).stopTab = tab;
document.documentElement.dataset['ready'] = 'true';
