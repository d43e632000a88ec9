/**
 * The crash law of sub-agents (docs/design/laws.md#sub-agents) as scenarios any store runs: a
 * parent whose `research` tool (an `agentTool`) runs a child on the same store, the child with a
 * `never` `note` a person approves and a `safe` `look`. Crashed at any write of parent or child
 * (lost, and landed) by `crashAtEveryWrite` — which counts the writes of both runs, and compares
 * the child's log too — and resumed with the same replies, a settlement answered from what the
 * case's outside world shows: every case ends as the uninterrupted run, parent and child (the same
 * step records, timestamps aside: the child's finished steps are not redone), and each approved
 * `note` happened exactly once. Two crashes, one in each run: sub-agents-double-crash.ts.
 */
import { agentTool, defineAgent, innermostRequest, ToolRegistry } from '../../src/core/index.ts';
import type {
  AgentDefinition,
  InputReply,
  InputRequest,
  ModelReply,
  RunRequest,
  RunStore,
  ToolSpec,
} from '../../src/core/index.ts';
import { collectingSink, crashAtEveryWrite, jsonActionInterpreter, scriptedModel } from '../../src/testing/index.ts';
import type { CrashLawReport } from '../../src/testing/index.ts';

export const PARENT_RUN = 'sub-law';
export const CHILD_RUN = `${PARENT_RUN}.s0.action`;

/** One scenario: the child's script and step budget, and what the uninterrupted run must show. */
export type Scenario = {
  readonly child: readonly string[];
  readonly childMaxSteps: number;
  /** The parent's requests, in order, in the uninterrupted run. */
  readonly asks: readonly string[];
  /** The child's notes, each approved: each must happen exactly once in every case. */
  readonly notes: readonly string[];
  /** The parent's observation of its child. */
  readonly observation: string;
};

const note = (text: string): string => `{"tool":"note","args":{"text":"${text}"}}`;
const look = (at: string): string => `{"tool":"look","args":{"at":"${at}"}}`;

export const SCENARIOS = {
  /** (a) The child looks, pauses once for its note's approval, and answers. */
  approval: {
    child: [look('shelf'), note('one'), '{"final":"found one"}'],
    childMaxSteps: 10,
    asks: ['s0.c0'],
    notes: ['note:one'],
    observation: 'found one',
  },
  /** (b) The child pauses twice: the parent asks s0.c0, then s0.c1, in the same step. */
  twice: {
    child: [note('one'), look('shelf'), note('two'), '{"final":"found two"}'],
    childMaxSteps: 10,
    asks: ['s0.c0', 's0.c1'],
    notes: ['note:one', 'note:two'],
    observation: 'found two',
  },
  /** (c) The child runs out of steps after its approved note: no final answer, and the parent reads so. */
  unfinished: {
    child: [look('shelf'), note('one'), look('floor')],
    childMaxSteps: 2,
    asks: ['s0.c0'],
    notes: ['note:one'],
    observation: `The sub-agent run "${CHILD_RUN}" ended without a final answer (max_steps) after 2 steps.`,
  },
} as const satisfies Record<string, Scenario>;

export type ScenarioName = keyof typeof SCENARIOS;
export const SCENARIO_NAMES = Object.keys(SCENARIOS) as ScenarioName[];

const SYNTHETIC = { notExecuted: 'Not executed.', envError: 'The environment failed.' } as const;
const USAGE = { inputTokens: 10, outputTokens: 5 } as const;
const obj = (props: Record<string, { type: string }>): ToolSpec['parameters'] => ({
  type: 'object',
  properties: props,
  required: Object.keys(props),
});

/** The child's tools: `note` (never, approved first), `look` (safe); each effect pushed to `world()`. */
function childTools(world: () => string[], { notePolicy = 'never', lookCounts: counts }: Faults): ToolSpec[] {
  return [
    {
      name: 'note',
      description: 'Write a note (must not repeat).',
      parameters: obj({ text: { type: 'string' } }),
      replayPolicy: notePolicy,
      needsApproval: true,
      handler: async (a) => {
        world().push(`note:${String(a['text'])}`);
        return `noted ${String(a['text'])}`;
      },
    },
    {
      name: 'look',
      description: 'Look somewhere.',
      parameters: obj({ at: { type: 'string' } }),
      replayPolicy: 'safe',
      handler: async (a) => {
        world().push(`look:${String(a['at'])}`);
        // Counting its runs, `look` is not the safe tool it says it is: a replay changes the child's step.
        const runs = counts ? ` (${world().filter((e) => e.startsWith('look:')).length})` : '';
        return `saw the ${String(a['at'])}${runs}`;
      },
    },
  ];
}

/** Request fields both runs share. */
const COMMON = {
  injections: {},
  modelBinding: {},
  modelReplayPolicy: 'safe',
  observationTemplate: 'Observation: {observation}',
  toolRenderStyle: 'none',
  cancelGraceMs: 1_000,
} as const;

/** The child's agent over `store`, as a restarted process builds it. */
function childAgent(store: RunStore, s: Scenario, world: () => string[], faults: Faults) {
  const registry = ToolRegistry.of(childTools(world, faults));
  const script = s.child.map((text, i): ModelReply => ({ callId: `child-${i}`, text, reasoning: null, usage: USAGE }));
  return defineAgent({
    model: scriptedModel(script),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
    defaults: {
      ...COMMON,
      tools: registry,
      executor: registry.executor(),
      budget: { maxSteps: s.childMaxSteps, maxValidActions: 10, maxContextChars: 100_000 },
    },
  });
}

/** Faults that break the law on purpose, to show its checks can fail. */
type Faults = {
  /** The child's `note` as its tool declares it: `safe` lets a crash repeat it (default `never`). */
  readonly notePolicy?: 'never' | 'safe';
  /** `look` says how many times it ran: a replay after a crash changes the child's step. */
  readonly lookCounts?: boolean;
};

/** Options of a scenario's setup. */
export type SubAgentOptions = Faults & { readonly scenario: ScenarioName };

/** The parent agent and request over `store` (its child on the same store), its effects pushed to `world()`. */
export function subAgentSetup(
  store: RunStore,
  world: () => string[],
  opts: SubAgentOptions,
): { agent: AgentDefinition; request: RunRequest } {
  const s: Scenario = SCENARIOS[opts.scenario];
  const research = agentTool({
    name: 'research',
    description: 'Research with a sub-agent.',
    parameters: obj({ question: { type: 'string' } }),
    agent: childAgent(store, s, world, opts),
    request: (args) => ({ goal: String(args['question']) }),
  });
  const registry = ToolRegistry.of([research]);
  return {
    agent: defineAgent({
      model: scriptedModel(['{"tool":"research","args":{"question":"Where is it?"}}', '{"final":"parent done"}']),
      interpreter: jsonActionInterpreter(),
      store,
      events: collectingSink(),
      syntheticObservations: SYNTHETIC,
    }),
    request: {
      ...COMMON,
      runId: PARENT_RUN,
      budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
      executor: registry.executor(),
      tools: registry,
      context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Find it.' }] }] },
    },
  };
}

/**
 * The person, given the parent's request wherever the log awaits one: approves what the child asks;
 * settles a note from what the world shows (`executed` when it happened, else `retry`) — or, with
 * `settle: 'retry'`, always retries (a person who breaks the law: the note happens again).
 */
export function subAgentReply(
  world: () => readonly string[],
  opts: { readonly settle?: 'world' | 'retry' } = {},
): (p: InputRequest) => InputReply {
  return (p) => {
    const leaf = innermostRequest(p);
    const action = leaf.decision?.action;
    const text = action?.kind === 'tool_call' ? String((action.arguments as { text?: unknown }).text) : '';
    if (leaf.kind !== 'settle') return { kind: 'approve', resultId: p.resultId };
    if (leaf.target === 'action' && opts.settle !== 'retry' && world().includes(`note:${text}`))
      return { kind: 'executed', resultId: p.resultId, observation: `noted ${text}` };
    return { kind: 'retry', resultId: p.resultId };
  };
}

/** The law's report, each case's outside world and the requests the parent raised in it (the reference's first). */
export type SubAgentsLawResult = {
  readonly scenario: ScenarioName;
  readonly report: CrashLawReport;
  readonly worlds: readonly (readonly string[])[];
  readonly asks: readonly (readonly string[])[];
};

/** Run a scenario through `crashAtEveryWrite` over fresh stores from `newStore` (one per case, and the reference's). */
export async function subAgentsLaw(
  opts: SubAgentOptions & { readonly newStore: () => RunStore; readonly settle?: 'world' | 'retry' },
): Promise<SubAgentsLawResult> {
  const worlds: string[][] = [];
  const asks: string[][] = [];
  const world = (): string[] => worlds.at(-1) as string[];
  const person = subAgentReply(world, opts);
  const report = await crashAtEveryWrite({
    store: () => (worlds.push([]), asks.push([]), opts.newStore()),
    setup: (store) => subAgentSetup(store, world, opts),
    reply: (p) => ((asks.at(-1) as string[]).push(p.resultId), person(p)),
  });
  return { scenario: opts.scenario, report, worlds, asks };
}

/** What every store asserts of a scenario's result; empty when the law holds. */
export function subAgentsLawProblems({ scenario, report, worlds, asks }: SubAgentsLawResult): string[] {
  const s: Scenario = SCENARIOS[scenario];
  const problems = [...report.failures];
  const [step0] = report.reference.trajectory;
  if (report.reference.finalAnswer !== 'parent done' || step0?.observation !== s.observation)
    problems.push(
      `the reference ended ${report.reference.stopReason}, observing ${JSON.stringify(step0?.observation)}`,
    );
  if (step0?.childRunId !== CHILD_RUN) problems.push(`the reference's step 0 names child ${step0?.childRunId}`);
  // The child's whole usage counts in the parent's step (the parent's model reports none).
  const calls = Math.min(s.child.length, s.childMaxSteps);
  const usage = { inputTokens: USAGE.inputTokens * calls, outputTokens: USAGE.outputTokens * calls };
  if (JSON.stringify(step0?.usage) !== JSON.stringify(usage))
    problems.push(`the reference's step 0 used ${JSON.stringify(step0?.usage)}, not ${JSON.stringify(usage)}`);
  if (JSON.stringify(asks[0]) !== JSON.stringify(s.asks))
    problems.push(`the reference asked ${JSON.stringify(asks[0])}, not ${JSON.stringify(s.asks)}`);
  // The child's writes are crash points too: the parent alone makes 10.
  if (report.writes < 20) problems.push(`only ${report.writes} writes`);
  if (report.cases.length !== report.writes * 2)
    problems.push(`${report.cases.length} cases for ${report.writes} writes`);
  problems.push(...worldProblems(s, worlds));
  return problems;
}

/** Each approved note exactly once in every case's world (the reference's first). */
export function worldProblems(s: Scenario, worlds: readonly (readonly string[])[]): string[] {
  const problems: string[] = [];
  worlds.forEach((w, i) => {
    for (const effect of s.notes) {
      const n = w.filter((e) => e === effect).length;
      if (n !== 1) problems.push(`${i === 0 ? 'the reference' : `case ${i}`}: ${effect} happened ${n} times`);
    }
  });
  return problems;
}
