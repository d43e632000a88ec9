/**
 * The crash law of steps with several calls (docs/design/laws.md), as one scenario any store runs:
 * step 0 runs three calls two at a time (`read`, a `never` `send`, `read`); step 1 four calls, two
 * `pay` calls a person approves or denies, a `read`, and an `ask` a person answers; step 2 answers.
 * Crashed after every write (lost, and landed) and resumed with the same replies — a settlement
 * answered from what the case's outside world shows — every case must end as the uninterrupted run,
 * and every `never` call run at most once, exactly once where it ran.
 */
import { nativeToolInterpreter } from '../../src/adapters/tool-interpreter.ts';
import { defineAgent, InMemoryStore, resume, run, ToolRegistry } from '../../src/core/index.ts';
import type {
  InputReply,
  InputRequest,
  ModelReply,
  RunRequest,
  RunStore,
  ToolCallRequest,
  ToolSpec,
} from '../../src/core/index.ts';
import { collectingSink, crashAtEveryWrite, faultyStore, scriptedModel } from '../../src/testing/index.ts';
import type { CrashLawReport } from '../../src/testing/index.ts';

type Call = ToolCallRequest;
const calls = (...c: Call[]): ModelReply => ({ text: '', reasoning: null, callId: null, toolCalls: c });

/** The model's replies: three calls, four calls, the answer. */
export const SEVERAL_CALLS_SCRIPT: readonly ModelReply[] = [
  calls(
    { id: 'c1', name: 'read', arguments: { x: 'a' } },
    { id: 'c2', name: 'send', arguments: { x: 'b' } },
    { id: 'c3', name: 'read', arguments: { x: 'c' } },
  ),
  calls(
    { id: 'c4', name: 'pay', arguments: { x: 'd' } },
    { id: 'c5', name: 'read', arguments: { x: 'e' } },
    { id: 'c6', name: 'pay', arguments: { x: 'f' } },
    { id: 'c7', name: 'ask', arguments: { x: 'g' } },
  ),
  { text: 'done', reasoning: null, callId: null },
];

/** `read` (safe), `send` (never), `pay` (never, approved first), `ask` (a person answers); each effect in `world`. */
export function severalCallsTools(world: () => string[]): ToolSpec[] {
  const parameters = { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] };
  const tool = (name: string, replayPolicy: 'safe' | 'never'): ToolSpec => ({
    name,
    description: `The ${name} tool.`,
    parameters,
    replayPolicy,
    handler: async (args) => {
      world().push(`${name}:${String(args['x'])}`);
      return `${name} did ${String(args['x'])}`;
    },
  });
  return [
    tool('read', 'safe'),
    tool('send', 'never'),
    { ...tool('pay', 'never'), needsApproval: true },
    { name: 'ask', description: 'Ask the user.', parameters, answeredBy: 'human' },
  ];
}

/** The person: approves `pay d`, denies `pay f`, answers "Blue."; settles from what the world shows. */
export function severalCallsReply(world: () => readonly string[]): (p: InputRequest) => InputReply {
  return (p) => {
    const action = p.decision?.action;
    const effect =
      action?.kind === 'tool_call' ? `${action.name}:${String((action.arguments as { x?: string }).x)}` : '';
    if (p.kind === 'settle' && p.target === 'model_call') return { kind: 'retry', resultId: p.resultId };
    if (p.kind === 'settle') {
      const [name, x] = effect.split(':');
      return world().includes(effect)
        ? { kind: 'executed', resultId: p.resultId, observation: `${name} did ${x}` }
        : { kind: 'retry', resultId: p.resultId };
    }
    if (p.kind === 'answer') return { kind: 'answer', resultId: p.resultId, text: 'Blue.' };
    if (effect === 'pay:f') return { kind: 'deny', resultId: p.resultId, reason: 'Not that one.' };
    return { kind: 'approve', resultId: p.resultId };
  };
}

/** The law's report and each case's outside world (the reference's first). */
export type SeveralCallsLawResult = {
  readonly report: CrashLawReport;
  readonly worlds: readonly (readonly string[])[];
};

/** The scenario's agent and request over `store`, its effects pushed to `world()`: as a restarted process builds it. */
export function severalCallsSetup(
  store: RunStore,
  world: () => string[],
): { agent: ReturnType<typeof defineAgent>; request: RunRequest } {
  const registry = ToolRegistry.of(severalCallsTools(world));
  return {
    agent: defineAgent({
      model: scriptedModel(SEVERAL_CALLS_SCRIPT),
      interpreter: nativeToolInterpreter('law'),
      store,
      events: collectingSink(),
      syntheticObservations: { notExecuted: 'Not executed.', envError: 'The environment failed.' },
    }),
    request: {
      runId: 'several-law',
      budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
      executor: registry.executor(),
      tools: registry,
      context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Do it all.' }] }] },
      injections: {},
      modelBinding: {},
      modelReplayPolicy: 'safe',
      observationTemplate: 'Observation: {observation}',
      toolRenderStyle: 'none',
      cancelGraceMs: 1_000,
      parallelToolCalls: 2,
    },
  };
}

/** Run the scenario through `crashAtEveryWrite` over fresh stores from `newStore`. */
export async function severalCallsLaw(opts: { readonly newStore: () => RunStore }): Promise<SeveralCallsLawResult> {
  const worlds: string[][] = [];
  const world = (): string[] => worlds.at(-1) as string[];
  const report = await crashAtEveryWrite({
    store: () => (worlds.push([]), opts.newStore()),
    setup: (store) => severalCallsSetup(store, world),
    reply: severalCallsReply(world),
  });
  return { report, worlds };
}

/** How many writes the uninterrupted run makes (each resume that carries it on marks where it took over). */
export async function severalCallsWrites(): Promise<number> {
  const world: string[] = [];
  const store = faultyStore(new InMemoryStore(), { crashAfterWrites: Number.POSITIVE_INFINITY });
  const person = severalCallsReply(() => world);
  const first = severalCallsSetup(store, () => world);
  let result = await run(first.agent, first.request);
  while (result.pending !== null) {
    const next = severalCallsSetup(store, () => world);
    result = await resume(next.agent, next.request, { input: person(result.pending) });
  }
  return store.writes.length;
}

const NEVER_EFFECTS = ['send:b', 'pay:d'];

/** What every store asserts of the result; empty when the law holds. */
export function severalCallsLawProblems({ report, worlds }: SeveralCallsLawResult): string[] {
  const problems = [...report.failures];
  const statuses = report.reference.trajectory.map((s) => s.calls?.map((c) => c.status) ?? s.decision);
  const want = [['executed', 'executed', 'executed'], ['executed', 'executed', 'denied', 'executed'], 'final'];
  if (JSON.stringify(statuses) !== JSON.stringify(want))
    problems.push(`the reference's steps are ${JSON.stringify(statuses)}`);
  if (report.writes < 20) problems.push(`only ${report.writes} writes`);
  if (report.cases.length !== report.writes * 2)
    problems.push(`${report.cases.length} cases for ${report.writes} writes`);
  worlds.forEach((w, i) => {
    for (const effect of NEVER_EFFECTS) {
      const n = w.filter((e) => e === effect).length;
      if (n !== 1) problems.push(`${i === 0 ? 'the reference' : `case ${i}`}: ${effect} happened ${n} times`);
    }
    if (w.includes('pay:f')) problems.push(`case ${i}: the denied pay:f happened`);
  });
  return problems;
}
