/**
 * The law of runs upgraded mid-way as scenarios every store runs (Web APIs only: Node, workerd,
 * Chromium): a run the old code (agent A) starts and a deploy (agent B) upgrades, crashed at every
 * write of the whole story by `crashAtEveryWrite` with `upgrade` and resumed — A before the
 * upgrade point, B with `{ upgrade }` after it. Each scenario upgrades at another kind of point:
 *
 * - `awaiting input`: a `never` note awaits approval; B adds a tool and changes `context.run`,
 *   then approves it (both requests whole objects).
 * - `boundary`: a deploy drains A between steps 1 and 2; B, resumed by run id, adds a tool and
 *   raises the budget from the defaults that started the run — the run goes past A's `maxSteps`.
 * - `in flight`: A died after its `never` charge ran, before the step was written; B changes
 *   `context.run` and raises the budget, and the charge is settled from the outside world.
 *
 * And {@link expectUpgradesRefused}: an upgrade that would take away what the pending approval
 * stands on is refused, and writes nothing.
 */
import { expect } from 'vitest';
import { defineAgent, exportRun, isPolyLoopError, resume, run, ToolRegistry } from '../../src/core/index.ts';
import type {
  AgentDefinition,
  InputReply,
  InputRequest,
  Message,
  RunLogView,
  RunRequest,
  RunRequestInput,
  RunStore,
  ToolSpec,
} from '../../src/core/index.ts';
import { collectingSink, crashAtEveryWrite, jsonActionInterpreter, scriptedModel } from '../../src/testing/index.ts';
import type { CrashLawReport, CrashLawUpgrade } from '../../src/testing/index.ts';

export const UPGRADE_SCENARIOS = ['awaiting input', 'boundary', 'in flight'] as const;
export type UpgradeScenario = (typeof UPGRADE_SCENARIOS)[number];

const RUN_ID = 'upgraded';
const system = (text: string): Message[] => [{ role: 'system', content: [{ type: 'text', text }] }];
const goal: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'Look the order up, then note or charge.' }] },
];

/** The script of each scenario, by call: A's steps, then B's (one model for both, as a deploy keeps it). */
const SCRIPTS: Record<UpgradeScenario, readonly string[]> = {
  'awaiting input': [
    '{"tool":"lookup","args":{"q":"order"}}',
    '{"tool":"note","args":{"text":"first"}}',
    '{"tool":"search","args":{"q":"refunds"}}',
    '{"final":"noted"}',
  ],
  boundary: [
    '{"tool":"lookup","args":{"q":"order"}}',
    '{"tool":"charge","args":{"cents":500}}',
    '{"tool":"search","args":{"q":"refunds"}}',
    '{"tool":"charge","args":{"cents":700}}',
    '{"final":"charged twice"}',
  ],
  'in flight': [
    '{"tool":"lookup","args":{"q":"order"}}',
    '{"tool":"charge","args":{"cents":500}}',
    '{"tool":"lookup","args":{"q":"receipt"}}',
    '{"final":"charged once"}',
  ],
};

/** Where B takes over in each scenario. */
const AT: Record<UpgradeScenario, CrashLawUpgrade['at']> = {
  'awaiting input': 'input',
  boundary: (v: RunLogView) => v.steps === 2 && v.inFlight === null,
  'in flight': (v: RunLogView) => v.inFlight?.actionIntent?.stepIndex === 1,
};

/** lookup and search (safe), note (never, needs approval), charge (never); the side effects go to `world()`. */
function allTools(world: () => string[]): Record<string, ToolSpec> {
  const args = (name: string, type: string): ToolSpec['parameters'] => ({
    type: 'object',
    properties: { [name]: { type } },
    required: [name],
    additionalProperties: false,
  });
  const effect = (kind: string, value: unknown, said: string): Promise<string> => {
    world().push(`${kind}:${String(value)}`);
    return Promise.resolve(said);
  };
  return {
    lookup: {
      name: 'lookup',
      description: 'Look a record up.',
      parameters: args('q', 'string'),
      replayPolicy: 'safe',
      handler: async (a) => `found ${String(a['q'])}`,
    },
    search: {
      name: 'search',
      description: 'Search the help pages.',
      parameters: args('q', 'string'),
      replayPolicy: 'safe',
      handler: async (a) => `results for ${String(a['q'])}`,
    },
    note: {
      name: 'note',
      description: 'Write a note (must not repeat).',
      parameters: args('text', 'string'),
      replayPolicy: 'never',
      needsApproval: true,
      handler: (a) => effect('note', a['text'], `noted ${String(a['text'])}`),
    },
    charge: {
      name: 'charge',
      description: 'Charge a card (must not repeat).',
      parameters: args('cents', 'integer'),
      replayPolicy: 'never',
      handler: (a) => effect('charge', a['cents'], `charged ${String(a['cents'])}`),
    },
  };
}

/** A's tools, prompt and budget, and B's (every scenario changes two of them). */
export type Version = {
  readonly tools: readonly string[];
  readonly system: string;
  readonly maxSteps: number;
  /** Tools that replace the standard ones of the same name. */
  readonly override?: Record<string, ToolSpec>;
};
export const VERSIONS: Record<UpgradeScenario, { readonly a: Version; readonly b: Version }> = {
  'awaiting input': {
    a: { tools: ['lookup', 'note'], system: 'Be brief.', maxSteps: 8 },
    b: { tools: ['lookup', 'note', 'search'], system: 'Be brief. Search the help pages after a note.', maxSteps: 8 },
  },
  boundary: {
    a: { tools: ['lookup', 'charge'], system: 'Be brief.', maxSteps: 4 },
    b: { tools: ['lookup', 'charge', 'search'], system: 'Be brief.', maxSteps: 8 },
  },
  'in flight': {
    a: { tools: ['lookup', 'charge'], system: 'Be brief.', maxSteps: 3 },
    b: { tools: ['lookup', 'charge'], system: 'Be brief. Confirm with a receipt.', maxSteps: 6 },
  },
};

/** The request data both versions share but the budget, tools and `context.run`. */
function requestData(v: Version, world: () => string[]): Omit<RunRequest, 'runId' | 'context'> {
  const all = { ...allTools(world), ...v.override };
  const registry = ToolRegistry.of(v.tools.map((name) => all[name] as ToolSpec));
  return {
    budget: { maxSteps: v.maxSteps, maxValidActions: 10, maxContextChars: 100_000 },
    tools: registry,
    executor: registry.executor(),
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation: {observation}',
    toolRenderStyle: 'json',
    cancelGraceMs: 1_000,
  };
}

/**
 * One version's agent and request over `store`. `boundary` keeps the request data in the agent's
 * defaults (A starts with `{ runId, goal }`, B resumes by id); the others pass whole requests.
 */
export function build(
  scenario: UpgradeScenario,
  v: Version,
  store: RunStore,
  world: () => string[],
  byId: boolean,
): { agent: AgentDefinition; request: RunRequestInput | string } {
  const base = {
    model: scriptedModel(SCRIPTS[scenario]),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'Not executed.', envError: 'The environment failed.' },
  };
  const data = requestData(v, world);
  if (scenario === 'boundary') {
    const agent = defineAgent({ ...base, defaults: { ...data, context: { run: system(v.system) } } });
    return { agent, request: byId ? RUN_ID : { runId: RUN_ID, goal } };
  }
  return { agent: defineAgent(base), request: { ...data, runId: RUN_ID, context: { run: system(v.system), goal } } };
}

/** Approve every approval; settle from the outside world (`executed` when the effect is there, else `retry`). */
export function upgradeReply(world: () => readonly string[]): (p: InputRequest) => InputReply {
  return (p) => {
    if (p.kind === 'approval') return { kind: 'approve', resultId: p.resultId };
    const action = p.decision?.action;
    if (p.kind !== 'settle' || p.target === 'model_call' || action?.kind !== 'tool_call')
      return { kind: 'retry', resultId: p.resultId };
    const [key, said] = action.name === 'note' ? ['text', 'noted'] : ['cents', 'charged'];
    const value = String((action.arguments as Record<string, unknown>)[key as string]);
    const happened = world().includes(`${action.name}:${value}`);
    return happened
      ? { kind: 'executed', resultId: p.resultId, observation: `${said} ${value}` }
      : { kind: 'retry', resultId: p.resultId };
  };
}

/** What the law found, with each case's outside world (the reference's first) and the kinds of request asked. */
export type UpgradeLawResult = {
  readonly scenario: UpgradeScenario;
  readonly report: CrashLawReport;
  readonly worlds: readonly (readonly string[])[];
  readonly asked: readonly string[];
};

/** Run one scenario through `crashAtEveryWrite` over fresh stores from `newStore` (one per case, one for the reference). */
export async function upgradeLaw(opts: {
  readonly scenario: UpgradeScenario;
  readonly newStore: () => RunStore;
  /** Another person (to show the check can fail); default {@link upgradeReply}. */
  readonly reply?: (world: () => readonly string[]) => (p: InputRequest) => InputReply;
}): Promise<UpgradeLawResult> {
  const { scenario } = opts;
  const worlds: string[][] = [];
  const world = (): string[] => worlds.at(-1) as string[];
  const asked: string[] = [];
  const person = (opts.reply ?? upgradeReply)(world);
  const { a, b } = VERSIONS[scenario];
  const report = await crashAtEveryWrite({
    store: () => (worlds.push([]), opts.newStore()),
    setup: (store) => build(scenario, a, store, world, false) as { agent: AgentDefinition; request: RunRequestInput },
    reply: (p) => (asked.push(p.kind), person(p)),
    upgrade: {
      setup: (store) => build(scenario, b, store, world, true),
      reason: `deploy: ${scenario}`,
      at: AT[scenario],
    },
  });
  return { scenario, report, worlds, asked };
}

/** What each scenario's uninterrupted run must show, beside the law itself. */
type Expected = {
  readonly stepIndex: number;
  readonly changed: readonly string[];
  readonly steps: number;
  readonly effects: readonly string[];
};
const EXPECTED: Record<UpgradeScenario, Expected> = {
  'awaiting input': { stepIndex: 1, changed: ['context', 'tools'], steps: 4, effects: ['note:first'] },
  boundary: { stepIndex: 2, changed: ['budget', 'tools'], steps: 5, effects: ['charge:500', 'charge:700'] },
  'in flight': { stepIndex: 1, changed: ['budget', 'context'], steps: 4, effects: ['charge:500'] },
};

/** What every runtime asserts of the result; empty when the law holds. */
export function upgradeLawProblems({ scenario, report, worlds, asked }: UpgradeLawResult): string[] {
  const problems = [...report.failures];
  const want = EXPECTED[scenario];
  const { reference: ref, upgrade } = report;
  if (ref.stopReason !== 'final_answer' || ref.steps !== want.steps)
    problems.push(`the reference ended ${ref.stopReason} after ${ref.steps} steps`);
  if (upgrade?.stepIndex !== want.stepIndex)
    problems.push(`the upgrade's stepIndex is ${String(upgrade?.stepIndex)}, not ${want.stepIndex}`);
  const changed = Object.keys(upgrade?.changes ?? {}).sort();
  if (JSON.stringify(changed) !== JSON.stringify(want.changed))
    problems.push(`the upgrade changes ${JSON.stringify(changed)}`);
  if (report.writes < 15) problems.push(`only ${report.writes} writes`);
  if (report.cases.length !== report.writes * 2)
    problems.push(`${report.cases.length} cases for ${report.writes} writes`);
  if (worlds.length !== report.cases.length + 1)
    problems.push(`${worlds.length} worlds for ${report.cases.length} cases`);
  if (scenario === 'in flight' && !asked.includes('settle')) problems.push('no settlement was asked');
  worlds.forEach((w, i) => {
    const effects = JSON.stringify([...w].sort());
    if (effects !== JSON.stringify([...want.effects].sort())) problems.push(`case ${i}: the world holds ${effects}`);
  });
  return problems;
}

/**
 * The `awaiting input` run paused on its approval of the `never` note, then three deploys that
 * would take away what that approval stands on — B without the note, the same with the approval
 * given, B whose note is replay-safe: each is refused with `UpgradeRefusedError` and the log is
 * the same bytes after it. The note never runs; the proper B still upgrades the run afterwards.
 */
export async function expectUpgradesRefused(store: RunStore): Promise<void> {
  const effects: string[] = [];
  const world = (): string[] => effects;
  const { a, b } = VERSIONS['awaiting input'];
  const old = build('awaiting input', a, store, world, false) as { agent: AgentDefinition; request: RunRequestInput };
  const paused = await run(old.agent, old.request);
  expect(paused.pending).toMatchObject({ kind: 'approval', decision: { action: { name: 'note' } } });
  const before = await exportRun(store, RUN_ID);
  const note = allTools(world)['note'] as ToolSpec;
  const deploys: [string, Version, InputReply | undefined][] = [
    ['without the note', { ...b, tools: ['lookup', 'search'] }, undefined],
    [
      'without the note, approving',
      { ...b, tools: ['lookup', 'search'] },
      { kind: 'approve', resultId: paused.pending!.resultId },
    ],
    ['with a replay-safe note', { ...b, override: { note: { ...note, replayPolicy: 'safe' } } }, undefined],
  ];
  for (const [what, version, input] of deploys) {
    const next = build('awaiting input', version, store, world, false);
    const opts = { upgrade: { reason: `deploy ${what}` }, ...(input ? { input } : {}) };
    const refused = await resume(next.agent, next.request, opts).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(refused, 'upgrade_refused'), `${what}: ${String(refused)}`).toBe(true);
    expect((refused as { tool?: string }).tool, what).toBe('note');
    expect(await exportRun(store, RUN_ID), what).toBe(before);
  }
  expect(effects).toEqual([]);
  const proper = build('awaiting input', b, store, world, false);
  const upgraded = await resume(proper.agent, proper.request, { upgrade: { reason: 'deploy' } });
  expect(upgraded.pending).toEqual(paused.pending);
  expect((await store.readLog(RUN_ID)).filter((r) => r.kind === 'upgrade')).toHaveLength(1);
}
