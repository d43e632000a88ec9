/**
 * The reference run of the portability law (docs/design/laws.md#portability), in Web APIs only so
 * the SAME agent runs in Node, workerd and Chromium: a scripted model (its replies carry finish
 * reasons, usage and provider metadata), a `safe` lookup and a `never` notify whose side effects go
 * to an in-memory list — "the outside world" — and one request. The `approval` variant asks a
 * person before the notify. Also how a run is driven to its end and the law's checks.
 */
import { defineAgent, importRun, resume, run, ToolRegistry } from '../../src/core/index.ts';
import type {
  AgentDefinition,
  InputReply,
  InputRequest,
  LogRecord,
  ModelReply,
  RunRequest,
  RunResult,
  RunStore,
  StepRecord,
  ToolSpec,
} from '../../src/core/index.ts';
import { collectingSink, faultyStore, jsonActionInterpreter, scriptedModel } from '../../src/testing/index.ts';

/** Tokens used (core's `Usage`, which its index does not export yet). */
export type Usage = RunResult['usage'];

/** The run id every reference run uses (an import must name the run its log is of). */
export const RUN_ID = 'portable-1';

/** Lookups (safe), an invalid reply, a notify (never), another lookup, then the answer. */
const TEXTS = [
  '{"tool":"lookup","args":{"city":"Paris"}}',
  'I am not sure what to do.',
  '{"tool":"notify","args":{"to":"ops","text":"Paris is sunny"}}',
  '{"tool":"lookup","args":{"city":"Oslo"}}',
  '{"final":"Paris is sunny, Oslo is snowy; ops was told."}',
];

/** Each reply with the metadata a provider reports, so the records carry it. */
const SCRIPT: ModelReply[] = TEXTS.map((text, i) => ({
  callId: `scripted-${i}`,
  text,
  reasoning: null,
  finishReason: 'stop',
  usage: { inputTokens: 100 + 10 * i, outputTokens: 20 + i },
  providerMetadata: { requestId: `req-${i}` },
}));

const WEATHER: Record<string, string> = { Paris: 'sunny', Oslo: 'snowy' };

/** What the notify returns when it ran: the observation a person reports when settling it. */
export const NOTIFY_OBSERVATION = 'sent';

/** `plain`: no person involved; `approval`: the notify needs a person's approval first. */
export type Variant = 'plain' | 'approval';
export const VARIANTS = ['plain', 'approval'] as const;

/** The tools; every real execution appends `name:argument` to `effects`. */
function tools(effects: string[], variant: Variant): ToolSpec[] {
  return [
    {
      name: 'lookup',
      description: 'Look up the weather of a city.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      },
      replayPolicy: 'safe',
      handler: async (args) => {
        const city = String(args['city']);
        effects.push(`lookup:${city}`);
        return WEATHER[city] ?? 'unknown';
      },
    },
    {
      name: 'notify',
      description: 'Send a message to a team (a side effect that must not repeat).',
      parameters: {
        type: 'object',
        properties: { to: { type: 'string' }, text: { type: 'string' } },
        required: ['to', 'text'],
        additionalProperties: false,
      },
      replayPolicy: 'never',
      ...(variant === 'approval' ? { needsApproval: true } : {}),
      handler: async (args) => {
        effects.push(`notify:${String(args['to'])}`);
        return NOTIFY_OBSERVATION;
      },
    },
  ];
}

/** The reference agent on `store`, and its request; tool executions go to `effects`. */
export function reference(
  store: RunStore,
  effects: string[] = [],
  variant: Variant = 'plain',
): { agent: AgentDefinition; request: RunRequest } {
  const agent = defineAgent({
    model: scriptedModel(SCRIPT),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
  });
  const registry = ToolRegistry.of(tools(effects, variant));
  const request: RunRequest = {
    runId: RUN_ID,
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
    executor: registry.executor(),
    tools: registry,
    context: {
      run: [{ role: 'system', content: [{ type: 'text', text: 'You report the weather.' }] }],
      goal: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Oslo; tell ops.' }] }],
    },
    injections: {},
    modelBinding: { user: 'portability' },
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation:\n{observation}',
    toolRenderStyle: 'markdown',
    cancelGraceMs: 1000,
  };
  return { agent, request };
}

/** A trajectory without its timestamps, for equality across runs and runtimes. */
export type Timeless = Omit<StepRecord, 'startedAt' | 'endedAt'>[];

export const timeless = (steps: readonly StepRecord[]): Timeless =>
  steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);

/** What a finished run is compared on: the stop reason, the answer, the token total, the trajectory without times. */
export type Outcome = {
  readonly stopReason: string;
  readonly finalAnswer: string | null;
  readonly usage: Usage;
  readonly trajectory: Timeless;
};

export const outcomeOf = (r: RunResult): Outcome => ({
  stopReason: r.stopReason,
  finalAnswer: r.finalAnswer,
  usage: r.usage,
  trajectory: timeless(r.trajectory),
});

/**
 * The reply the outside world gives to an open request: a person approves the notify; a notify in
 * doubt (`settle`) is answered from `effects` — `executed` with the real observation when it ran,
 * `retry` when it did not. The reference asks nothing else (anything else fails the case).
 */
export function worldReply(pending: InputRequest, effects: readonly string[]): InputReply {
  const name = pending.decision?.action?.kind === 'tool_call' ? pending.decision.action.name : null;
  if (name !== 'notify')
    throw new Error(`the reference never asks about ${name ?? pending.target} (${pending.kind} ${pending.resultId})`);
  if (pending.kind === 'approval') return { kind: 'approve', resultId: pending.resultId };
  if (pending.kind !== 'settle') throw new Error(`the reference never asks for ${pending.kind}`);
  const ran = effects.some((e) => e.startsWith('notify:'));
  return ran
    ? { kind: 'executed', resultId: pending.resultId, observation: NOTIFY_OBSERVATION }
    : { kind: 'retry', resultId: pending.resultId };
}

/** The pending requests a drive answered, as `kind:reply` (e.g. `approval:approve`, `settle:executed`). */
export type Answered = string[];

/**
 * Start (`run`) or resume the reference on `store` and answer every request from the outside
 * world until it ends; each call builds the agent afresh, as a restarted process would.
 */
export async function drive(
  store: RunStore,
  effects: string[],
  variant: Variant,
  start: 'run' | 'resume',
  answered: Answered,
): Promise<RunResult> {
  const first = reference(store, effects, variant);
  let result = start === 'run' ? await run(first.agent, first.request) : await resume(first.agent, first.request);
  while (result.pending !== null) {
    if (answered.length > 10) throw new Error('the reference asked more than ten times');
    const reply = worldReply(result.pending, effects);
    answered.push(`${result.pending.kind}:${reply.kind}`);
    const next = reference(store, effects, variant);
    result = await resume(next.agent, next.request, { input: reply });
  }
  return result;
}

/** The uninterrupted run on `store` (approvals answered), counting its writes: every write is a cut point. */
export async function uninterrupted(
  store: RunStore,
  variant: Variant = 'plain',
): Promise<{ outcome: Outcome; writes: number; log: readonly LogRecord[]; effects: string[]; answered: Answered }> {
  const effects: string[] = [];
  const answered: Answered = [];
  const counting = faultyStore(store, { crashAfterWrites: Number.POSITIVE_INFINITY });
  const outcome = outcomeOf(await drive(counting, effects, variant, 'run', answered));
  return { outcome, writes: counting.writes.length, log: await store.readLog(RUN_ID), effects, answered };
}

/**
 * Run the reference on `store` (answering approvals) and "crash" it at write `k`: before it lands,
 * or (`landsBeforeThrow`) after it landed but before its promise resolved. Resolves to the log
 * left (possibly empty).
 */
export async function cutRun(
  store: RunStore,
  k: number,
  landsBeforeThrow: boolean,
  effects: string[],
  variant: Variant = 'plain',
): Promise<readonly LogRecord[]> {
  const faulty = faultyStore(store, { crashAfterWrites: k, landsBeforeThrow });
  const done = await drive(faulty, effects, variant, 'run', []).then(
    () => true,
    () => false,
  );
  if (done || !faulty.crashed) throw new Error(`the reference run did not crash at write ${k}`);
  return store.readLog(RUN_ID);
}

/**
 * Import `ndjson` into `store` and resume the reference there, answering every request from the
 * outside world (`effects`, which collects executions and must hold those before the cut).
 */
export async function finishOn(
  store: RunStore,
  ndjson: string,
  effects: string[],
  variant: Variant = 'plain',
): Promise<{ outcome: Outcome; answered: Answered }> {
  await importRun(store, RUN_ID, ndjson);
  const answered: Answered = [];
  const outcome = outcomeOf(await drive(store, effects, variant, 'resume', answered));
  return { outcome, answered };
}

/**
 * The side-effect half of the law: every case ends with the notify executed, so it ran EXACTLY
 * once across both halves (a settled `executed` counts the run before the cut). Returns a problem, or null.
 */
export function effectsProblem(effects: readonly string[], outcome: Outcome): string | null {
  const notified = effects.filter((e) => e.startsWith('notify:')).length;
  const executed = outcome.trajectory.filter(notifyExecuted).length;
  if (notified !== executed) return `the never action ran ${notified} times; the trajectory says ${executed}`;
  return null;
}

/** The notify's step, executed. */
export const notifyExecuted = (s: Pick<StepRecord, 'actionRepr' | 'actionStatus'>): boolean =>
  (s.actionRepr ?? '').startsWith('notify') && s.actionStatus === 'executed';
