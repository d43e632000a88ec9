/**
 * fast-check arbitraries for property tests of the run log: model replies, tool arguments and
 * observations as hostile as a model, a tool or a person can make them, and a small native
 * tool-calling agent that runs them (docs/design/run-log.md, the lean form).
 */
import fc from 'fast-check';
import {
  defineAgent,
  InMemoryStore,
  resume,
  run,
  ToolEnvironmentError,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type {
  ActionExecutor,
  ActionOutcome,
  AgentDefinition,
  ContentBlock,
  Decision,
  DecisionInterpreter,
  FinishReason,
  InputReply,
  InputRequest,
  JsonObject,
  JsonValue,
  LogRecord,
  ModelReply,
  RunRequest,
  RunResult,
  RunStore,
  ToolSpec,
  Usage,
} from '../../../src/core/index.ts';
import { collectingSink, scriptedModel } from '../../../src/testing/index.ts';
import type { ScriptedModel } from '../../../src/testing/index.ts';
import { SYNTHETIC, text } from './fixtures.ts';

/** One UTF-16 unit or code point: lone surrogates, line and paragraph separators, NUL, quotes, astral. */
const unit = fc.oneof(
  fc.constantFrom('\ud800', '\udfff', '\u2028', '\u2029', '\u0000', '\n', '"', '\\', '😀', '\ufeff', '\ufffd'),
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  fc.constantFrom('a', 'b', ' '),
);

/** Strings a model or a tool may produce, and ones that look like the log's own text. */
export const anyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit, maxLength: 12 }) },
  fc.constantFrom(
    '',
    'null',
    '{observation}',
    'Observation:\n{observation}',
    's0.action',
    's0.model',
    'echo({})',
    '{"kind":"step","v":"1.2"}',
    '\u2028\u2029',
    '\u0000',
    '\ud800\udc00\udc00',
  ),
  fc.constantFrom(1, 30_000).map((n) => 'x\ud83d'.repeat(n)),
);

const specialNumber = fc.constantFrom(-0, 0, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 0.1, 1e21);
const number = fc.oneof(specialNumber, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));

const key = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '', '0', '10', '-1', '1e3', 'kind', 'v'),
  fc.string({ unit, maxLength: 6 }),
);

/** An object built from entries as data properties (a `__proto__` key stays an own key). */
function objectOf(entries: readonly (readonly [string, JsonValue])[]): JsonObject {
  const out: Record<string, JsonValue> = {};
  for (const [k, v] of entries)
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

const { value: jsonValue } = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    number,
    anyString,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map(objectOf),
  ),
}));

/** `depth` arrays nested inside one another around `inner`. */
const nested = (depth: number, inner: JsonValue): JsonValue => {
  let v = inner;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : objectOf([['d', v]]);
  return v;
};

/** A JSON object of a few levels: keys named like object members, odd numbers. */
const shallowObject: fc.Arbitrary<JsonObject> = fc.array(fc.tuple(key, jsonValue), { maxLength: 5 }).map(objectOf);

/** A JSON object: any nesting, keys named like object members, odd numbers; sometimes up to 100 levels deep (past what a reply may hold). */
export const jsonObject: fc.Arbitrary<JsonObject> = fc.oneof(
  { weight: 5, arbitrary: shallowObject },
  fc
    .tuple(fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 95, max: 100 })), jsonValue)
    .map(([d, v]) => objectOf([['deep', nested(d, v)]])),
);

/** The run's tools, and names no tool has, some named like object members. */
type ToolName = 'echo' | 'once' | 'boom' | 'ask' | 'human' | 'missing' | 'toString' | '__proto__' | 'constructor' | '';
const UNKNOWN: readonly ToolName[] = ['missing', 'toString', '__proto__', 'constructor', ''];

/** What the model does in one step. */
export type StepPlan =
  | { readonly kind: 'call'; readonly tool: ToolName; readonly args: JsonValue }
  | { readonly kind: 'several'; readonly args: JsonObject }
  | { readonly kind: 'empty' };

const usage = fc.record(
  {
    inputTokens: fc.oneof(fc.constantFrom(0, Number.MAX_SAFE_INTEGER), fc.nat()),
    outputTokens: fc.oneof(fc.constantFrom(0, Number.MAX_SAFE_INTEGER), fc.nat()),
    cachedInputTokens: fc.nat(),
    reasoningTokens: fc.constantFrom(0, Number.MAX_SAFE_INTEGER),
  },
  { requiredKeys: ['inputTokens', 'outputTokens'] },
);

/** The parts of a reply a step's plan does not decide (`null` where the type says optional: JS adapters send it). */
export type ReplyExtras = {
  readonly callId: string | null;
  readonly text: string;
  readonly reasoning: string | null | undefined;
  readonly finishReason: FinishReason | null | undefined;
  readonly usage: Usage | null | undefined;
  readonly providerMetadata: JsonObject | null | undefined;
  readonly withContent: boolean;
  /** Extra fields of every content block and tool call: they travel into the records. */
  readonly blockExtra: JsonObject;
  readonly opaque: JsonValue | undefined;
};

const extras: fc.Arbitrary<ReplyExtras> = fc.record({
  callId: fc.oneof(
    fc.constant(null),
    anyString.filter((s) => s !== ''),
  ),
  text: anyString,
  reasoning: fc.oneof(fc.constant(null), fc.constant(undefined), fc.constant(''), anyString),
  finishReason: fc.constantFrom(undefined, null, 'stop', 'length', 'tool_calls', 'content_filter', 'error', 'other'),
  usage: fc.oneof(fc.constant(undefined), fc.constant(null), usage),
  providerMetadata: fc.oneof(fc.constant(undefined), fc.constant(null), jsonObject),
  withContent: fc.boolean(),
  blockExtra: fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, jsonObject),
  opaque: fc.option(jsonValue, { nil: undefined }),
});

const plan: fc.Arbitrary<StepPlan> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('call' as const),
      tool: fc.oneof(fc.constantFrom<ToolName>('echo', 'once', 'boom', 'ask', 'human'), fc.constantFrom(...UNKNOWN)),
      // Mostly objects; a model may send any JSON (the executor refuses what its schema does not take).
      args: fc.oneof({ weight: 5, arbitrary: jsonObject }, jsonValue),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('several' as const), args: jsonObject }) },
  fc.constant({ kind: 'empty' as const }),
);

/** A person's reply to a step's approval or question (an answer's text is `reason`). */
export type PersonPlan =
  | { readonly kind: 'approve'; readonly args: JsonObject | null }
  | { readonly kind: 'deny'; readonly reason: string };

const person: fc.Arbitrary<PersonPlan> = fc.oneof(
  // A person's arguments nested past the limit are refused at once (InvalidInputError), not written: kept shallow.
  fc.record({ kind: fc.constant('approve' as const), args: fc.option(shallowObject, { nil: null }) }),
  fc.record({ kind: fc.constant('deny' as const), reason: anyString }),
);

/** What an executor of its own reports instead of the registry's outcome (null: the registry's as it is). */
export type OutcomePlan = {
  readonly status: ActionOutcome['status'];
  readonly observationIsSynthetic: boolean;
  readonly envReportedCompletion: boolean;
  readonly observationTruncatedChars: number;
} | null;

const outcome: fc.Arbitrary<OutcomePlan> = fc.option(
  fc.record({
    status: fc.constantFrom<ActionOutcome['status']>('executed', 'executed', 'not_executed', 'env_error'),
    observationIsSynthetic: fc.boolean(),
    envReportedCompletion: fc.boolean(),
    observationTruncatedChars: fc.constantFrom(0, 1, 7, Number.MAX_SAFE_INTEGER),
  }),
  { nil: null },
);

/** One step: what the model does, the rest of its reply, what the tool answers and what a person says. */
export type StepSpec = {
  readonly plan: StepPlan;
  readonly extras: ReplyExtras;
  readonly observation: string;
  readonly person: PersonPlan;
  readonly outcome: OutcomePlan;
};

/** A whole scripted run; `several`: how the interpreter reads a reply with more than one call. */
export type RunPlan = {
  readonly steps: readonly StepSpec[];
  readonly final: ReplyExtras;
  readonly repr: 'canonical' | 'own';
  readonly several: 'invalid' | 'actions';
  readonly modelReplayPolicy: 'safe' | 'never';
};

export const runPlan: fc.Arbitrary<RunPlan> = fc.record({
  steps: fc.array(fc.record({ plan, extras, observation: anyString, person, outcome }), { minLength: 1, maxLength: 4 }),
  final: extras.map((e) => ({ ...e, text: e.text === '' ? 'done' : e.text })),
  repr: fc.constantFrom('canonical' as const, 'own' as const),
  several: fc.constantFrom('invalid' as const, 'actions' as const),
  modelReplayPolicy: fc.constantFrom('safe' as const, 'never' as const),
});

function replyOf(e: ReplyExtras, text: string, calls: ModelReply['toolCalls']): ModelReply {
  const content: ContentBlock[] = [];
  const x = e.blockExtra;
  if (e.reasoning) content.push({ ...x, type: 'reasoning', text: e.reasoning, signature: e.text });
  if (e.opaque !== undefined) content.push({ ...x, type: 'opaque', provider: text, data: e.opaque } as ContentBlock);
  if (text !== '') content.push({ ...x, type: 'text', text });
  for (const c of calls ?? [])
    content.push({ ...x, type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments });
  return {
    callId: e.callId,
    text,
    reasoning: e.reasoning as string | null,
    ...(calls && calls.length > 0 ? { toolCalls: calls.map((c) => ({ ...x, ...c })) } : {}),
    ...(e.withContent ? { content } : {}),
    ...(e.finishReason === undefined ? {} : { finishReason: e.finishReason }),
    ...(e.usage === undefined ? {} : { usage: e.usage }),
    ...(e.providerMetadata === undefined ? {} : { providerMetadata: e.providerMetadata }),
  } as ModelReply;
}

/** The model's replies for a plan, by call sequence. */
export function scriptOf(p: RunPlan): ModelReply[] {
  const replies = p.steps.map(({ plan: s, extras: e }, i) => {
    if (s.kind === 'empty') return replyOf(e, '', []);
    if (s.kind === 'several')
      return replyOf(e, e.text, [
        { id: `c${i}a`, name: 'echo', arguments: s.args },
        { id: `c${i}b`, name: 'ask', arguments: {} },
        { id: `c${i}c`, name: UNKNOWN[i % UNKNOWN.length] as string, arguments: s.args },
      ]);
    return replyOf(e, e.text, [{ id: `c${i}`, name: s.tool, arguments: s.args }]);
  });
  return [...replies, replyOf(p.final, p.final.text, [])];
}

/** A native interpreter; `own` writes its own trajectoryRepr and historyText, not the ones a reader derives. */
function interpreter({ repr, several }: RunPlan): DecisionInterpreter {
  const reprOf = (name: string, args: JsonValue): string =>
    repr === 'own' ? `${name} ${JSON.stringify(args)}` : `${name}(${JSON.stringify(args)})`;
  return {
    params: Object.freeze({ interpreter: 'fuzz', repr, several }),
    interpret(reply: ModelReply): Decision {
      const calls = reply.toolCalls ?? [];
      const historyText = repr === 'own' ? `said: ${reply.text}` : reply.text;
      const historyContent = reply.content ?? undefined;
      const withContent = historyContent ? { historyContent } : {};
      if (calls.length > 1 && several === 'actions') {
        const decided = calls.map((c) => ({
          action: { kind: 'tool_call' as const, name: c.name, arguments: c.arguments, id: c.id },
          trajectoryRepr: reprOf(c.name, c.arguments),
        }));
        return { kind: 'actions', calls: decided, historyText, ...withContent };
      }
      if (calls.length > 1)
        return { kind: 'invalid', explanation: `${calls.length} calls`, historyText, ...withContent };
      const call = calls[0];
      if (call) {
        return {
          kind: 'action',
          action: { kind: 'tool_call', name: call.name, arguments: call.arguments, id: call.id },
          trajectoryRepr: reprOf(call.name, call.arguments),
          historyText,
          ...withContent,
        };
      }
      if (reply.text === '') return { kind: 'invalid', explanation: 'empty', historyText, ...withContent };
      return { kind: 'final', answer: reply.text, historyText, ...withContent };
    },
  };
}

/** Tools: echo (and once, never replayed) answers the step's planned observation, boom rejects (an env error), ask needs an approval, human is answered by a person. */
function tools(p: RunPlan): ToolSpec[] {
  const observation = (stepIndex: number): string => p.steps[stepIndex]?.observation ?? '';
  return [
    {
      name: 'echo',
      description: 'Answers the planned observation.',
      parameters: { type: 'object' },
      replayPolicy: 'safe',
      handler: async (_args, ctx) => observation(ctx.stepIndex),
    },
    {
      name: 'once',
      description: 'Answers the planned observation; not run again after a crash.',
      parameters: { type: 'object' },
      replayPolicy: 'never',
      handler: async (_args, ctx) => observation(ctx.stepIndex),
    },
    {
      name: 'boom',
      description: 'The environment fails.',
      parameters: { type: 'object' },
      replayPolicy: 'safe',
      handler: async () => {
        throw new ToolEnvironmentError('boom');
      },
    },
    {
      name: 'ask',
      description: 'Needs a person to approve.',
      parameters: { type: 'object' },
      replayPolicy: 'safe',
      needsApproval: true,
      handler: async (_args, ctx) => observation(ctx.stepIndex),
    },
    { name: 'human', description: 'A person answers.', parameters: { type: 'object' }, answeredBy: 'human' },
  ];
}

/** The registry's executor, with each step's outcome overridden as its plan says (by an executor of its own). */
function overriding(p: RunPlan, inner: ActionExecutor): ActionExecutor {
  return {
    params: Object.freeze({ executor: 'overriding' }),
    replayPolicy: 'safe',
    async execute(action, ctx) {
      const got = await inner.execute(action, ctx);
      const plan = p.steps[ctx.stepIndex]?.outcome;
      return plan ? { ...got, ...plan } : got;
    },
  };
}

export type PlanHarness = { agent: AgentDefinition; model: ScriptedModel; request: RunRequest };

/** An agent and request that run `p` on `store`. */
export function planHarness(p: RunPlan, store: RunStore = new InMemoryStore()): PlanHarness {
  const model = scriptedModel(scriptOf(p));
  const agent = defineAgent({
    model,
    interpreter: interpreter(p),
    store,
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
  });
  const registry = ToolRegistry.of(tools(p));
  const request: RunRequest = {
    runId: 'fuzz-1',
    budget: { maxSteps: 20, maxValidActions: 20, maxContextChars: 10_000_000 },
    executor: p.steps.some((st) => st.outcome) ? overriding(p, registry.executor()) : registry.executor(),
    tools: registry,
    context: { run: [text('system', 'Be exact.')], goal: [text('user', 'Echo.')] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: p.modelReplayPolicy,
    observationTemplate: 'Observation:\n{observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1000,
    ...(p.several === 'actions' ? { parallelToolCalls: 4 } : {}),
  };
  return { agent, model, request };
}

const WRITES: ReadonlySet<PropertyKey> = new Set([
  'runStarted',
  'intent',
  'result',
  'resultAndIntent',
  'step',
  'runEnded',
  'inputRequest',
  'input',
  'upgrade',
  'callResult',
  'resumed',
]);

/** `inner`, remembering a copy of every record the loop hands to a write method, in order. */
export function recording(inner: RunStore): { store: RunStore; written: LogRecord[] } {
  const written: LogRecord[] = [];
  const store = new Proxy(inner, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      if (!WRITES.has(prop)) return v.bind(target);
      return (...args: unknown[]) => {
        for (const a of args)
          if (typeof a === 'object' && a !== null && 'kind' in a) written.push(structuredClone(a) as LogRecord);
        return v.apply(target, args);
      };
    },
  });
  return { store, written };
}

/**
 * The planned reply of a person to `pending`, by the plan of its step: an answer's text is a
 * denial's reason; a settlement is `executed` (with that reason) for a denial, `cancel` for an
 * approval with arguments, else `retry`.
 */
export function replyTo(p: RunPlan, pending: InputRequest): InputReply {
  const plan = p.steps[pending.stepIndex]?.person ?? { kind: 'approve', args: null };
  const resultId = pending.resultId;
  if (pending.kind === 'settle') {
    if (plan.kind === 'deny' && pending.target === 'action')
      return { kind: 'executed', resultId, observation: plan.reason };
    return plan.kind === 'approve' && plan.args ? { kind: 'cancel', resultId } : { kind: 'retry', resultId };
  }
  if (pending.kind === 'answer') return { kind: 'answer', resultId, text: plan.kind === 'deny' ? plan.reason : 'yes' };
  if (plan.kind === 'deny') return { kind: 'deny', resultId, reason: plan.reason };
  return plan.args ? { kind: 'approve', resultId, arguments: plan.args } : { kind: 'approve', resultId };
}

/**
 * Carry a run on until it ends: `run` (or `resume` when the store holds it), then a resume with
 * the planned reply for as long as it waits for a person. Rejects as soon as a driver does.
 */
export async function drive(p: RunPlan, h: PlanHarness, store: RunStore): Promise<RunResult> {
  const started = (await store.readLog(h.request.runId)).length > 0;
  let result = started ? await resume(h.agent, h.request) : await run(h.agent, h.request);
  while (result.pending) result = await resume(h.agent, h.request, { input: replyTo(p, result.pending) });
  return result;
}

/**
 * The first place `got` differs from `want`, or null: own keys in the same order, the same
 * prototypes, `Object.is` on every leaf (so `-0`, `undefined` and a missing key count). Vitest's
 * `toStrictEqual` cannot say it for data with an own `constructor` key: it compares those as types.
 */
export function firstDifference(got: unknown, want: unknown, path = '$'): string | null {
  if (typeof got !== 'object' || got === null || typeof want !== 'object' || want === null)
    return Object.is(got, want) ? null : `${path}: ${String(got)} is not ${String(want)}`;
  if (Object.getPrototypeOf(got) !== Object.getPrototypeOf(want)) return `${path}: another prototype`;
  const gk = Reflect.ownKeys(got);
  const wk = Reflect.ownKeys(want);
  if (gk.join('\u0001') !== wk.join('\u0001'))
    return `${path}: keys ${JSON.stringify(gk)} are not ${JSON.stringify(wk)}`;
  for (const k of wk) {
    const d = firstDifference(
      (got as Record<PropertyKey, unknown>)[k],
      (want as Record<PropertyKey, unknown>)[k],
      `${path}.${String(k)}`,
    );
    if (d) return d;
  }
  return null;
}
