/**
 * The human-input law (docs/design/laws.md#human-input-across-crashes) as one scenario every store
 * runs (Web APIs only: Node, workerd, Chromium): a run with an approved safe action, an approved
 * `never` action, an answer, a denied `never` action and a final answer, crashed at every write by
 * `crashAtEveryWrite` and resumed with the same replies — settle requests answered from the case's
 * own outside world.
 */
import { defineAgent, ToolRegistry } from '../../src/core/index.ts';
import type { InputReply, InputRequest, ReplayPolicy, RunRequest, RunStore, ToolSpec } from '../../src/core/index.ts';
import { collectingSink, crashAtEveryWrite, jsonActionInterpreter, scriptedModel } from '../../src/testing/index.ts';
import type { CrashLawReport } from '../../src/testing/index.ts';

/** add (safe, approved), note (never, approved), ask (a person answers), note again (denied), final. */
export const LAW_SCRIPT = [
  '{"tool":"add","args":{"a":1,"b":2}}',
  '{"tool":"note","args":{"text":"first"}}',
  '{"tool":"ask","args":{"q":"colour?"}}',
  '{"tool":"note","args":{"text":"second"}}',
  '{"final":"done"}',
];

/** The scenario's tools; `world()` is the outside world of the current case. */
export function lawTools(world: () => string[]): ToolSpec[] {
  const obj = (props: Record<string, { type: string }>): ToolSpec['parameters'] => ({
    type: 'object',
    properties: props,
    required: Object.keys(props),
  });
  return [
    {
      name: 'add',
      description: 'Add two integers.',
      parameters: obj({ a: { type: 'integer' }, b: { type: 'integer' } }),
      replayPolicy: 'safe',
      needsApproval: true,
      handler: async (a) => String(Number(a['a']) + Number(a['b'])),
    },
    {
      name: 'note',
      description: 'Write a note (must not repeat).',
      parameters: obj({ text: { type: 'string' } }),
      replayPolicy: 'never',
      needsApproval: true,
      handler: async (a) => {
        world().push(`note:${String(a['text'])}`);
        return `noted ${String(a['text'])}`;
      },
    },
    { name: 'ask', description: 'Ask the user.', parameters: obj({ q: { type: 'string' } }), answeredBy: 'human' },
  ];
}

/** The person's replies: approve, answer "Blue.", deny the second note; a settle from what the world shows. */
export function lawReply(world: () => readonly string[]): (p: InputRequest) => InputReply {
  return (p) => {
    const action = p.decision?.action;
    const text = action?.kind === 'tool_call' ? (action.arguments as { text?: string }).text : undefined;
    if (p.kind === 'answer') return { kind: 'answer', resultId: p.resultId, text: 'Blue.' };
    if (p.kind === 'settle' && p.target === 'model_call') return { kind: 'retry', resultId: p.resultId };
    if (p.kind === 'settle') {
      return world().includes(`note:${text}`)
        ? { kind: 'executed', resultId: p.resultId, observation: `noted ${text}` }
        : { kind: 'retry', resultId: p.resultId };
    }
    if (text === 'second') return { kind: 'deny', resultId: p.resultId, reason: 'Enough notes.' };
    return { kind: 'approve', resultId: p.resultId };
  };
}

/** What the law found, with each case's outside world. */
export type HumanInputLawResult = { readonly report: CrashLawReport; readonly worlds: readonly (readonly string[])[] };

/**
 * Run the scenario through `crashAtEveryWrite` over fresh stores from `newStore` (one per case,
 * and one for the uninterrupted reference).
 */
export async function humanInputLaw(opts: {
  readonly newStore: () => RunStore;
  readonly modelReplayPolicy: ReplayPolicy;
  /** Another person (to show the check can fail); default {@link lawReply}. */
  readonly reply?: (world: () => readonly string[]) => (p: InputRequest) => InputReply;
}): Promise<HumanInputLawResult> {
  const worlds: string[][] = [];
  const world = (): string[] => worlds.at(-1) as string[];
  const registry = ToolRegistry.of(lawTools(world));
  const setup = (store: RunStore): { agent: ReturnType<typeof defineAgent>; request: RunRequest } => ({
    agent: defineAgent({
      model: scriptedModel(LAW_SCRIPT),
      interpreter: jsonActionInterpreter(),
      store,
      events: collectingSink(),
      syntheticObservations: { notExecuted: 'Not executed.', envError: 'The environment failed.' },
    }),
    request: {
      runId: 'law',
      budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
      executor: registry.executor(),
      tools: registry,
      context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Add, note, ask, note again.' }] }] },
      injections: {},
      modelBinding: {},
      modelReplayPolicy: opts.modelReplayPolicy,
      observationTemplate: 'Observation:\n{observation}',
      toolRenderStyle: 'markdown',
      cancelGraceMs: 1_000,
    },
  });
  const report = await crashAtEveryWrite({
    store: () => (worlds.push([]), opts.newStore()),
    setup,
    reply: (opts.reply ?? lawReply)(world),
  });
  return { report, worlds };
}

/** What every runtime asserts of the result; empty when the law holds. */
export function lawProblems({ report, worlds }: HumanInputLawResult): string[] {
  const problems = [...report.failures];
  const statuses = report.reference.trajectory.map((s) => s.actionStatus);
  if (JSON.stringify(statuses) !== JSON.stringify(['executed', 'executed', 'executed', 'denied', null]))
    problems.push(`the reference's steps are ${JSON.stringify(statuses)}`);
  if (report.writes <= 20) problems.push(`only ${report.writes} writes`);
  if (report.cases.length !== report.writes * 2)
    problems.push(`${report.cases.length} cases for ${report.writes} writes`);
  if (worlds.length !== report.cases.length + 1)
    problems.push(`${worlds.length} worlds for ${report.cases.length} cases`);
  worlds.forEach((w, i) => {
    const first = w.filter((c) => c === 'note:first').length;
    const second = w.filter((c) => c === 'note:second').length;
    if (first !== 1 || second !== 0)
      problems.push(`case ${i}: the approved note ran ${first} times, the denied one ${second}`);
  });
  return problems;
}
