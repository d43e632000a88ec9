/**
 * The crash law of approvals a person edits (docs/design/laws.md#edited-approvals-across-crashes),
 * as one scenario any store runs (Web APIs only). A `note` step: one `never` `note` the model
 * proposes as "draft" and a person approves as "final"; a `pay` step: three calls run two at a time
 * — a `never` `pay` of 900 a person approves as 90, a `safe` `read`, a `pay` of 20 approved as
 * proposed; then the answer. `both` runs the two steps, a slow store may run one (`one-call`,
 * `several-calls`). Crashed after every write (lost, and landed) and resumed with the same
 * replies — a settlement answered from what the case's outside world shows — every case must end as
 * the uninterrupted run, every `never` call must have run exactly once and with the arguments the
 * person gave, and every model call after an edit must see the call as the model proposed it,
 * answered by an observation that opens with the fixed sentence naming the edited arguments.
 */
import { nativeToolInterpreter } from '../../src/adapters/tool-interpreter.ts';
import { defineAgent, InMemoryStore, resume, run, ToolRegistry } from '../../src/core/index.ts';
import type {
  InputReply,
  InputRequest,
  JsonObject,
  ModelCall,
  ModelReply,
  RunRequest,
  RunStore,
  StepRecord,
  ToolSpec,
} from '../../src/core/index.ts';
import { collectingSink, crashAtEveryWrite, faultyStore, scriptedModel } from '../../src/testing/index.ts';
import type { CrashLawReport } from '../../src/testing/index.ts';

const calls = (...c: NonNullable<ModelReply['toolCalls']>): ModelReply => ({
  text: '',
  reasoning: null,
  callId: null,
  toolCalls: c,
});

/** What the model proposes, and what the person approves instead (by tool call id). */
const EDITS: Readonly<Record<string, { readonly proposed: JsonObject; readonly edited: JsonObject }>> = {
  n1: { proposed: { text: 'draft' }, edited: { text: 'final' } },
  p1: { proposed: { amount: 900, to: 'acme' }, edited: { amount: 90, to: 'acme' } },
};

const NOTE_STEP = calls({ id: 'n1', name: 'note', arguments: EDITS['n1']!.proposed });
const PAY_STEP = calls(
  { id: 'p1', name: 'pay', arguments: EDITS['p1']!.proposed },
  { id: 'r1', name: 'read', arguments: { x: 'a' } },
  { id: 'p2', name: 'pay', arguments: { amount: 20, to: 'bolt' } },
);
const ANSWER: ModelReply = { text: 'done', reasoning: null, callId: null };

/** Which steps a run of the law holds before its answer. */
export type EditScenario = 'both' | 'one-call' | 'several-calls';

/** The model's replies: a note edited alone in its step, a step of three calls with one payment edited, the answer. */
export const EDIT_SCRIPTS: Readonly<Record<EditScenario, readonly ModelReply[]>> = {
  both: [NOTE_STEP, PAY_STEP, ANSWER],
  'one-call': [NOTE_STEP, ANSWER],
  'several-calls': [PAY_STEP, ANSWER],
};

/** The sentence an edited call's observation opens with (docs/human-input.md#edit-on-approval). */
export const EDIT_SENTENCE = 'A person changed the arguments of this call before it ran, to ';

/** The effect each tool leaves in the world, and the observation it returns. */
const effectOf = (name: string, args: Record<string, unknown>): string =>
  name === 'note'
    ? `note:${String(args['text'])}`
    : `${name}:${String(args['amount'] ?? args['x'])}:${args['to'] ?? ''}`;
const observationOf = (effect: string): string => `did ${effect}`;

/** `note` and `pay` (never, each needs approval), `read` (safe); every execution goes to `world()`. */
export function editTools(world: () => string[]): ToolSpec[] {
  const run = (name: string) => async (args: Record<string, unknown>) => {
    const effect = effectOf(name, args);
    world().push(effect);
    return observationOf(effect);
  };
  const object = (properties: JsonObject): ToolSpec['parameters'] => ({
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  });
  return [
    {
      name: 'note',
      description: 'Write a note (must not repeat).',
      parameters: object({ text: { type: 'string' } }),
      replayPolicy: 'never',
      needsApproval: true,
      handler: run('note'),
    },
    {
      name: 'pay',
      description: 'Pay an amount (must not repeat).',
      parameters: object({ amount: { type: 'integer', minimum: 1 }, to: { type: 'string' } }),
      replayPolicy: 'never',
      needsApproval: true,
      handler: run('pay'),
    },
    {
      name: 'read',
      description: 'Read.',
      parameters: object({ x: { type: 'string' } }),
      replayPolicy: 'safe',
      handler: run('read'),
    },
  ];
}

/**
 * The person: approves the note and the first payment with the edited arguments, the second
 * payment as proposed; settles a call in doubt from what the world shows (the request shows the
 * call as it ran: with the person's arguments).
 */
export function editReply(world: () => readonly string[]): (p: InputRequest) => InputReply {
  return (p) => {
    if (p.kind === 'settle' && p.target === 'model_call') return { kind: 'retry', resultId: p.resultId };
    const action = p.decision?.action;
    if (action?.kind !== 'tool_call') throw new Error(`the scenario never asks about ${p.resultId}`);
    if (p.kind === 'settle') {
      const effect = effectOf(action.name, action.arguments as Record<string, unknown>);
      return world().includes(effect)
        ? { kind: 'executed', resultId: p.resultId, observation: observationOf(effect) }
        : { kind: 'retry', resultId: p.resultId };
    }
    const edit = action.id === undefined ? undefined : EDITS[action.id];
    return edit
      ? { kind: 'approve', resultId: p.resultId, arguments: edit.edited }
      : { kind: 'approve', resultId: p.resultId };
  };
}

/** The scenario's agent and request over `store`: as a (re)started process builds it. */
export function editSetup(
  store: RunStore,
  world: () => string[],
  scenario: EditScenario = 'both',
  onModel: (calls: readonly ModelCall[]) => void = () => undefined,
): { agent: ReturnType<typeof defineAgent>; request: RunRequest } {
  const registry = ToolRegistry.of(editTools(world));
  const model = scriptedModel(EDIT_SCRIPTS[scenario]);
  onModel(model.calls);
  return {
    agent: defineAgent({
      model,
      interpreter: nativeToolInterpreter('edit-law'),
      store,
      events: collectingSink(),
      syntheticObservations: { notExecuted: 'Not executed.', envError: 'The environment failed.' },
    }),
    request: {
      runId: 'edit-law',
      budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
      executor: registry.executor(),
      tools: registry,
      context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Note it, then pay.' }] }] },
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

/** One case's outside world and every model call its processes made. */
export type EditCase = { readonly world: string[]; readonly modelCalls: (readonly ModelCall[])[] };

/** The law's report, and each case (the reference's first). */
export type EditLawResult = {
  readonly scenario: EditScenario;
  readonly report: CrashLawReport;
  readonly cases: readonly EditCase[];
};

/** Run the scenario through `crashAtEveryWrite` over fresh stores from `newStore` (one per case). */
export async function editApprovalLaw(opts: {
  readonly newStore: () => RunStore;
  /** The steps the run holds (default `both`). */
  readonly scenario?: EditScenario;
  /** Another person (to show the checks can fail); default {@link editReply}. */
  readonly reply?: (world: () => readonly string[]) => (p: InputRequest) => InputReply;
}): Promise<EditLawResult> {
  const scenario = opts.scenario ?? 'both';
  const cases: EditCase[] = [];
  const current = (): EditCase => cases.at(-1) as EditCase;
  const report = await crashAtEveryWrite({
    store: () => (cases.push({ world: [], modelCalls: [] }), opts.newStore()),
    setup: (store) =>
      editSetup(
        store,
        () => current().world,
        scenario,
        (seen) => current().modelCalls.push(seen),
      ),
    reply: (opts.reply ?? editReply)(() => current().world),
  });
  return { scenario, report, cases };
}

/** How many writes the uninterrupted run of a scenario makes (a store that needs its cases made ahead counts them). */
export async function editApprovalWrites(scenario: EditScenario = 'both'): Promise<number> {
  const world: string[] = [];
  const store = faultyStore(new InMemoryStore(), { crashAfterWrites: Number.POSITIVE_INFINITY });
  const person = editReply(() => world);
  const first = editSetup(store, () => world, scenario);
  let result = await run(first.agent, first.request);
  while (result.pending !== null) {
    const next = editSetup(store, () => world, scenario);
    result = await resume(next.agent, next.request, { input: person(result.pending) });
  }
  return store.writes.length;
}

/** The step (by model call) at which the model proposed each edited call. */
const proposedAt = (scenario: EditScenario): Map<string, number> =>
  new Map(
    EDIT_SCRIPTS[scenario].flatMap((reply, i) =>
      (reply.toolCalls ?? []).filter((c) => c.id in EDITS).map((c) => [c.id, i] as const),
    ),
  );

/** What must run in every world, once each: the `never` calls with the person's arguments. */
const NEVER_EFFECTS: Record<string, readonly string[]> = { n1: ['note:final'], p1: ['pay:90:acme', 'pay:20:bolt'] };
/** What must never run: the proposals a person changed. */
const PROPOSED_EFFECTS: Record<string, string> = { n1: 'note:draft', p1: 'pay:900:acme' };

/** What every store asserts of the result; empty when the law holds. */
export function editApprovalLawProblems({ scenario, report, cases }: EditLawResult): string[] {
  const problems = [...report.failures];
  const edited = [...proposedAt(scenario).keys()];
  if (report.writes < 10 * edited.length) problems.push(`only ${report.writes} writes`);
  if (report.cases.length !== report.writes * 2)
    problems.push(`${report.cases.length} cases for ${report.writes} writes`);
  if (cases.length !== report.cases.length + 1)
    problems.push(`${cases.length} worlds for ${report.cases.length} cases`);
  problems.push(...referenceProblems(scenario, report.reference.trajectory));
  cases.forEach((c, i) => {
    const name = i === 0 ? 'the reference' : `case ${i}`;
    for (const effect of edited.flatMap((id) => NEVER_EFFECTS[id] ?? [])) {
      const n = c.world.filter((e) => e === effect).length;
      if (n !== 1) problems.push(`${name}: ${effect} happened ${n} times`);
    }
    for (const id of edited) {
      const effect = PROPOSED_EFFECTS[id] as string;
      if (c.world.includes(effect)) problems.push(`${name}: the proposal ${effect} ran, not the person's edit`);
    }
    for (const call of c.modelCalls.flat()) {
      const seen = historyProblem(scenario, call);
      if (seen) problems.push(`${name}, model call ${call.callSeq}: ${seen}`);
    }
  });
  return problems;
}

const opening = (args: JsonObject): string => `${EDIT_SENTENCE}${JSON.stringify(args)}.\n`;

/** The uninterrupted run's steps: the edited calls ran as edited and their observations say so. */
function referenceProblems(scenario: EditScenario, trajectory: readonly StepRecord[]): string[] {
  const problems: string[] = [];
  const want = (what: string, got: unknown, expected: unknown): void => {
    if (JSON.stringify(got) !== JSON.stringify(expected))
      problems.push(`the reference's ${what} is ${JSON.stringify(got)}, not ${JSON.stringify(expected)}`);
  };
  const at = proposedAt(scenario);
  want('number of steps', trajectory.length, EDIT_SCRIPTS[scenario].length);
  const note = at.has('n1') ? trajectory[at.get('n1') as number] : undefined;
  if (note) {
    want('note step', [note.actionStatus, note.actionRepr], ['executed', 'note({"text":"final"})']);
    want('note observation', note.observation, `${opening(EDITS['n1']!.edited)}${observationOf('note:final')}`);
  }
  const pays = at.has('p1') ? trajectory[at.get('p1') as number] : undefined;
  if (pays) {
    const [p1, r1, p2] = pays.calls ?? [];
    want(
      'calls',
      pays.calls?.map((c) => c.status),
      ['executed', 'executed', 'executed'],
    );
    want(
      'edited payment',
      [p1?.actionRepr, p1?.observation],
      ['pay({"amount":90,"to":"acme"})', `${opening(EDITS['p1']!.edited)}${observationOf('pay:90:acme')}`],
    );
    want('read', r1?.observation, observationOf('read:a:'));
    want('payment approved as proposed', p2?.observation, observationOf('pay:20:bolt'));
  }
  want('last step', trajectory.at(-1)?.decision, 'final');
  return problems;
}

/**
 * What a model call after an edit must see: each edited call as the model proposed it (and never
 * as edited), answered by an observation opening with the sentence and the edited arguments.
 */
function historyProblem(scenario: EditScenario, call: ModelCall): string | null {
  const toolCalls: { id?: string; arguments?: unknown }[] = [];
  const results = new Map<string, string>();
  for (const m of call.messages) {
    for (const part of m.content as readonly Record<string, unknown>[]) {
      if (part['type'] === 'tool_call') toolCalls.push(part as { id?: string; arguments?: unknown });
      if (part['type'] === 'tool_result') results.set(String(part['toolCallId']), String(part['text']));
    }
  }
  const due = [...proposedAt(scenario)].filter(([, step]) => call.callSeq > step).map(([id]) => id);
  for (const id of due) {
    const edit = EDITS[id]!;
    const shown = toolCalls.filter((c) => c.id === id).map((c) => JSON.stringify(c.arguments));
    if (JSON.stringify(shown) !== JSON.stringify([JSON.stringify(edit.proposed)]))
      return `the call ${id} is shown with ${JSON.stringify(shown)}, not the proposal ${JSON.stringify(edit.proposed)}`;
    const answer = results.get(id) ?? '';
    if (!answer.includes(opening(edit.edited)))
      return `the answer to ${id} does not open with the sentence naming ${JSON.stringify(edit.edited)}: ${answer}`;
  }
  return null;
}
