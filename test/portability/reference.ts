/**
 * The reference run of the portability law (SPEC §10), in Web APIs only so the SAME agent runs in
 * Node, workerd and Chromium: a scripted model, a `safe` lookup and a `never` notify whose side
 * effects go to an in-memory list, and one request. Also the cut points and the law's check.
 */
import { decodeLog, defineAgent, exportRun, importRun, readRunLog, resume, run, ToolRegistry } from '../../src/core/index.ts';
import type { AgentDefinition, LogRecord, RunRequest, RunResult, RunStore, StepRecord, ToolSpec } from '../../src/core/index.ts';
import { collectingSink, faultyStore, jsonActionInterpreter, scriptedModel } from '../../src/testing/index.ts';

/** The run id every reference run uses (an import must name the run its log is of). */
export const RUN_ID = 'portable-1';

/** Lookups (safe), an invalid reply, a notify (never), another lookup, then the answer. */
const SCRIPT = [
  '{"tool":"lookup","args":{"city":"Paris"}}',
  'I am not sure what to do.',
  '{"tool":"notify","args":{"to":"ops","text":"Paris is sunny"}}',
  '{"tool":"lookup","args":{"city":"Oslo"}}',
  '{"final":"Paris is sunny, Oslo is snowy; ops was told."}',
];

const WEATHER: Record<string, string> = { Paris: 'sunny', Oslo: 'snowy' };

/** The tools; every real execution appends `name:argument` to `effects`. */
function tools(effects: string[]): ToolSpec[] {
  return [
    {
      name: 'lookup',
      description: 'Look up the weather of a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
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
      parameters: { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string' } }, required: ['to', 'text'], additionalProperties: false },
      replayPolicy: 'never',
      handler: async (args) => {
        effects.push(`notify:${String(args['to'])}`);
        return 'sent';
      },
    },
  ];
}

/** The reference agent on `store`, and its request; tool executions go to `effects`. */
export function reference(store: RunStore, effects: string[] = []): { agent: AgentDefinition; request: RunRequest } {
  const agent = defineAgent({
    model: scriptedModel(SCRIPT),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
  });
  const registry = ToolRegistry.of(tools(effects));
  const request: RunRequest = {
    runId: RUN_ID,
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
    executor: registry.executor(),
    tools: registry,
    context: { run: [{ role: 'system', content: [{ type: 'text', text: 'You report the weather.' }] }], goal: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Oslo; tell ops.' }] }] },
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

export const timeless = (steps: readonly StepRecord[]): Timeless => steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);

/** What a finished run is compared on: the stop reason, the answer, the trajectory without times. */
export type Outcome = { readonly stopReason: string; readonly finalAnswer: string | null; readonly trajectory: Timeless };

export const outcomeOf = (r: RunResult): Outcome => ({ stopReason: r.stopReason, finalAnswer: r.finalAnswer, trajectory: timeless(r.trajectory) });

/** The uninterrupted run on `store`, counting its writes: every write is a cut point. */
export async function uninterrupted(store: RunStore): Promise<{ outcome: Outcome; writes: number; log: readonly LogRecord[]; effects: string[] }> {
  const effects: string[] = [];
  const counting = faultyStore(store, { crashAfterWrites: Number.POSITIVE_INFINITY });
  const { agent, request } = reference(counting, effects);
  const outcome = outcomeOf(await run(agent, request));
  return { outcome, writes: counting.writes.length, log: await store.readLog(RUN_ID), effects };
}

/**
 * Run the reference on `store` and "crash" it at write `k`: before it lands, or (`landsBeforeThrow`)
 * after it landed but before its promise resolved. Resolves to the log left (possibly empty).
 */
export async function cutRun(store: RunStore, k: number, landsBeforeThrow: boolean, effects: string[]): Promise<readonly LogRecord[]> {
  const { agent, request } = reference(faultyStore(store, { crashAfterWrites: k, landsBeforeThrow }), effects);
  const done = await run(agent, request).then(() => true, () => false);
  if (done) throw new Error(`the reference run did not crash at write ${k}`);
  return store.readLog(RUN_ID);
}

/**
 * The outcome the law demands of a resumed log: the uninterrupted one — except where a `never`
 * action is in flight, which the run settles: it ends `in_flight_unknown` after the steps it has.
 */
export function expectedOutcome(cutLog: readonly LogRecord[], full: Outcome): Outcome {
  const view = readRunLog(cutLog);
  if (view.inFlight?.resolution !== 'settle') return full;
  return { stopReason: 'in_flight_unknown', finalAnswer: null, trajectory: full.trajectory.slice(0, view.inFlight.stepIndex) };
}

/** Import `ndjson` into `store` and resume the reference there; `effects` collects executions. */
export async function finishOn(store: RunStore, ndjson: string, effects: string[]): Promise<Outcome> {
  await importRun(store, RUN_ID, ndjson);
  const { agent, request } = reference(store, effects);
  return outcomeOf(await resume(agent, request));
}

/**
 * The side-effect half of the law: the `never` notify ran at most once across both halves, and
 * ran if the final trajectory says it executed. Returns a problem, or null.
 */
export function effectsProblem(effects: readonly string[], outcome: Outcome): string | null {
  const notified = effects.filter((e) => e.startsWith('notify:')).length;
  if (notified > 1) return `the never action ran ${notified} times`;
  const executed = outcome.trajectory.some(notifyExecuted);
  if (executed && notified === 0) return 'the trajectory says notify executed, but it never ran';
  return null;
}

/** The named cut points the cross-runtime fixtures are taken at. */
export const CUTS = ['boundary', 'reinterpret', 'replay'] as const;
export type Cut = (typeof CUTS)[number];

/**
 * The write count `k` that leaves a log in the cut's state, found from the uninterrupted log
 * (never a constant). Each cut carries the executed `never` notify, which no resume may repeat:
 * `boundary` right after the notify's step, `reinterpret` the last model result without its action
 * intent (the final reply), `replay` the last safe action intent without its step.
 */
export function cutPoint(log: readonly LogRecord[], cut: Cut): number {
  const views = log.map((_, i) => readRunLog(log.slice(0, i + 1)));
  const notified = (v: (typeof views)[number]): boolean => v.trajectory.some(notifyExecuted);
  const lastIndex = (hit: (v: (typeof views)[number]) => boolean): number => views.map(hit).lastIndexOf(true);
  const at =
    cut === 'boundary' ? views.findIndex((v) => v.state === 'at_boundary' && notified(v))
      : cut === 'reinterpret' ? lastIndex((v) => v.inFlight?.resolution === 'reinterpret' && notified(v))
        : lastIndex((v) => v.inFlight?.resolution === 'replay_action' && notified(v));
  if (at < 0) throw new Error(`the reference log has no ${cut} cut`);
  return at + 1;
}

const notifyExecuted = (s: Pick<StepRecord, 'actionRepr' | 'actionStatus'>): boolean => (s.actionRepr ?? '').startsWith('notify') && s.actionStatus === 'executed';

/** The fixture of a runtime's store at a cut: the reference crashed there, exported. */
export async function fixtureOf(store: RunStore, cut: Cut, cutAt: number): Promise<string> {
  const log = await cutRun(store, cutAt, false, []);
  if (cutPoint(log, cut) !== log.length) throw new Error(`cut ${cut} left a log in state ${readRunLog(log).state}`);
  return exportRun(store, RUN_ID);
}

/** A fixture's file name. */
export const fixtureName = (runtime: Runtime, cut: Cut): string => `${runtime}-${cut}.ndjson`;

export const RUNTIMES = ['node', 'workerd', 'chromium'] as const;
export type Runtime = (typeof RUNTIMES)[number];

/**
 * What a log says, as `readRunLog` reads it: record kinds, state, in-flight resolution and the
 * trajectory without times. A fixture must still say what the runtime writes today; its bytes may
 * be of an older minor (additive changes), which must keep importing.
 */
export function meaningOf(ndjson: string): unknown {
  const records = decodeLog(ndjson).records;
  const view = readRunLog(records);
  return { kinds: records.map((r) => (r.kind === 'intent' ? `intent:${r.intent}` : r.kind)), state: view.state, resolution: view.inFlight?.resolution ?? null, trajectory: timeless(view.trajectory) };
}

/** The NDJSON without its timestamps: fixtures of one cut, written by different runtimes, agree on it. */
export function timelessNdjson(ndjson: string): unknown[] {
  return ndjson.trimEnd().split('\n').map((line) => {
    const rec = JSON.parse(line) as Record<string, unknown>;
    const { startedAt: _s, endedAt: _e, ...rest } = rec;
    const step = rest['step'] as Record<string, unknown> | undefined;
    if (step) {
      const { startedAt: _ss, endedAt: _se, ...s } = step;
      return { ...rest, step: s };
    }
    return rest;
  });
}
