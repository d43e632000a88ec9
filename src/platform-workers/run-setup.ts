/**
 * What a user gives the run Durable Object: the factory that builds each run (and how its
 * output is checked before a run is stored), and the object's options, checked once when the
 * class is made.
 * @module
 */
import { defineAgent, InMemoryStore } from '../core/index.ts';
import { checkOptionKeys, jsonProblem, resolveRequest } from '../core/internal-entry.ts';
import { resume, run, validateRunRequest } from '../core/index.ts';
import type {
  AgentConfig,
  AgentDefaults,
  AgentDefinition,
  DecisionInterpreter,
  EventSink,
  ModelCaller,
  RunRequest,
  RunRequestInput,
  RunResult,
  RunStore,
  ResumeOptions,
  SyntheticObservations,
} from '../core/index.ts';
import type { OptionKeys } from '../core/internal-entry.ts';
import { ChildRunStore } from './child-run-store.ts';
import type { ChildObjects } from './child-run-store.ts';
import type { RunIndexNamespace } from './run-report.ts';

/**
 * What the user's factory returns for one run: the agent's seams, its `defaults`, and the run's
 * own request fields (the run id is the object's). Two forms (decision 0059):
 * - **with `defaults`** holding `tools` and `executor` (the code a resume needs) and the fields
 *   the agent's runs share: `request` gives only the run's own data (`goal`, …). The request is
 *   written into the run's log when it starts, and a resume goes on by the run's id: only the
 *   agent is built again, so a deploy that changes it halts the run until it is upgraded.
 * - **without `defaults`**: `request` is the whole request, built again from the input at every
 *   resume (the form before defaults).
 */
export type RunSetup = {
  readonly model: ModelCaller;
  readonly interpreter: DecisionInterpreter;
  readonly syntheticObservations: SyntheticObservations;
  /** The request fields every run of this agent shares, with `tools` and `executor` (`defineAgent`'s `defaults`). */
  readonly defaults?: AgentDefaults;
  /** The run's own fields; with `defaults`, data only (`{ goal }` is enough), and read from the log on a resume. */
  readonly request?: Omit<RunRequestInput, 'runId'>;
  /** Optional extra sink that receives every event too (logging, metrics). Not part of the run's identity. */
  readonly events?: EventSink;
};

/**
 * What the factory is given: the Worker's env, the run id and the `input` of
 * `POST /runs` as stored (a JSON round trip, the same at start and at every resume).
 */
export type RunSetupContext<Env> = {
  readonly env: Env;
  readonly runId: string;
  readonly input: unknown;
  /**
   * The store of this run's sub-agents: give it to the agent of an `agentTool`
   * (`defineAgent({ …, store: childStore })`). Each child run then lives in its own run object
   * (`GET /runs/<child run id>`), driven by this run's object. Needs the `runs` option.
   */
  readonly childStore: RunStore;
};

/** Options of {@link createRunObject}. */
export type RunObjectOptions<Env> = {
  /**
   * Build the run from its input. Called when the run starts (a throw rejects the input: HTTP 400,
   * nothing is stored) and again, with the same stored input, whenever the run is resumed after
   * eviction — so it must be deterministic: the same input gives the same agent (and, without
   * `defaults`, the same request; with them the request is read back from the run's log).
   */
  readonly setup: (ctx: RunSetupContext<Env>) => RunSetup | Promise<RunSetup>;
  /**
   * Alarm period (default 30 s). The alarm is set before the run starts and re-armed at every
   * firing while the run lives; when it fires and no driver is running in this instance (the
   * object was evicted, crashed or redeployed), it resumes the run. Cleared when the run ends.
   */
  readonly resumeAfterMs?: number;
  /**
   * Give up after this many drives in a row fail without writing a record (default 10): the run
   * is halted, logged and its alarm cleared, instead of retrying a permanent fault (a factory
   * that throws on resume, storage refusing writes) at every alarm forever.
   */
  readonly maxFailedDrives?: number;
  /** SSE keep-alive comment period (default 20 s; 0 = never). */
  readonly keepAliveMs?: number;
  /**
   * The run index binding (a `RunIndex` class, see `createApp`'s `index`): the object reports
   * its run when it is created or imported and whenever its status changes. Without it no run
   * is listed by `GET /runs`.
   */
  readonly index?: (env: Env) => RunIndexNamespace;
  /**
   * The namespace this very class is bound to (`(env) => env.RUNS`): a sub-agent's run lives in
   * an object of it, which the parent's object writes through `childStore`. Without it a run
   * that starts a sub-agent fails (a `StoreError` naming this option).
   */
  readonly runs?: (env: Env) => ChildObjects;
};

/** The outcome of {@link RunObjectBase.start}: ok, or why not (a value, since errors lose their class over RPC). */
export type StartOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: 'conflict' | 'bad_request'; readonly message: string };

/** A start or import refused because the object holds a run already (or is importing one). */
export function startConflict(runId: string): StartOutcome {
  return { ok: false, code: 'conflict', message: `run ${JSON.stringify(runId)} already exists` };
}

const RUN_OBJECT_OPTIONS: OptionKeys<RunObjectOptions<unknown>> = {
  setup: true,
  resumeAfterMs: true,
  maxFailedDrives: true,
  keepAliveMs: true,
  index: true,
  runs: true,
};
const SETUP_FIELDS: OptionKeys<RunSetup> = {
  model: true,
  interpreter: true,
  syntheticObservations: true,
  defaults: true,
  request: true,
  events: true,
};

/**
 * Throws `InvalidRequestError` for a key that is not an option (naming the nearest one), and a
 * TypeError naming an option that would make the alarm spin, never fire, or the keep-alive misbehave.
 */
export function checkOptions<Env>(options: RunObjectOptions<Env>): void {
  checkOptionKeys(options, RUN_OBJECT_OPTIONS, 'createRunObject');
  const { resumeAfterMs, maxFailedDrives, keepAliveMs, runs } = options;
  if (runs !== undefined && typeof runs !== 'function')
    throw new TypeError('createRunObject: runs must be a function of env giving the namespace of this class');
  if (resumeAfterMs !== undefined && !(Number.isFinite(resumeAfterMs) && resumeAfterMs > 0)) {
    throw new TypeError(
      `createRunObject: resumeAfterMs must be a positive number of milliseconds, got ${resumeAfterMs}`,
    );
  }
  if (maxFailedDrives !== undefined && !(Number.isInteger(maxFailedDrives) && maxFailedDrives > 0)) {
    throw new TypeError(`createRunObject: maxFailedDrives must be a positive integer, got ${maxFailedDrives}`);
  }
  if (keepAliveMs !== undefined && !(Number.isFinite(keepAliveMs) && keepAliveMs >= 0)) {
    throw new TypeError(
      `createRunObject: keepAliveMs must be 0 (off) or a positive number of milliseconds, got ${keepAliveMs}`,
    );
  }
}

/** What the factory of `runId` is given: its env, the stored input and the store of its sub-agents. */
export function setupContext<Env>(
  options: RunObjectOptions<Env>,
  env: Env,
  runId: string,
  input: unknown,
): RunSetupContext<Env> {
  return { env, runId, input, childStore: new ChildRunStore(runId, options.runs?.(env)) };
}

/** A new run's input, checked: the factory's setup, the run's complete request, and the input as stored (JSON). */
export type Prepared = {
  readonly ok: true;
  readonly setup: RunSetup;
  readonly request: RunRequest;
  readonly stored: string;
};

/** Why a start or import is refused. */
export type Refused = Extract<StartOutcome, { readonly ok: false }>;

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The agent config of a setup over `store` (its defaults included), without the event sink. */
export function agentOf(setup: RunSetup, store: RunStore): Omit<AgentConfig, 'events'> {
  const { model, interpreter, syntheticObservations, defaults } = setup;
  const config = { model, interpreter, store, syntheticObservations };
  return defaults === undefined ? config : { ...config, defaults };
}

/** True when the setup's runs are resumed by their id (it has `defaults`): their request lives in their log. */
export function byId(setup: RunSetup): boolean {
  return setup.defaults !== undefined;
}

/** The request a run starts with (or, without `defaults`, is resumed with): the setup's fields and the run id. */
export function requestOf(setup: RunSetup, runId: string): RunRequestInput {
  return { ...setup.request, runId };
}

/** What a drive knows of the run's log: whether there is one, whether its `run_started` keeps the request (1.2 on). */
export type Logged = { readonly hasLog: boolean; readonly storedRequest: boolean };

/**
 * One call of the library: `run` for a run without a log; else `resume` — by the run's id when
 * the setup has defaults and the log keeps its request, otherwise with the request the setup
 * builds (a setup without defaults, or a log written before stored requests).
 */
export function callLibrary(
  agent: AgentDefinition,
  setup: RunSetup,
  runId: string,
  opts: ResumeOptions & { signal: AbortSignal },
  logged: Logged,
): Promise<RunResult> {
  if (!logged.hasLog) return run(agent, requestOf(setup, runId), { signal: opts.signal });
  return resume(agent, byId(setup) && logged.storedRequest ? runId : requestOf(setup, runId), opts);
}

/** Why the defaults form is incomplete: the code a resume needs is in the defaults, and only there. */
function codeProblem(setup: RunSetup): string | null {
  if (!byId(setup)) return null;
  const missing = (['tools', 'executor'] as const).filter((k) => setup.defaults?.[k] === undefined);
  if (missing.length > 0) {
    return `defaults.${missing.join(' and defaults.')} required: a run resumes by its id, its code from the defaults`;
  }
  const given = (['tools', 'executor'] as const).filter((k) => setup.request?.[k] !== undefined);
  if (given.length === 0) return null;
  return `request.${given.join(' and request.')} not allowed with defaults: a resume takes the code from the defaults`;
}

/** The complete request of what the factory built, or why the library would refuse it (invalid agent or request). */
function checked(runId: string, setup: RunSetup): RunRequest | string {
  try {
    checkOptionKeys(setup, SETUP_FIELDS, 'what setup returned');
    const problem = codeProblem(setup);
    if (problem !== null) return problem;
    const events = { params: { sink: 'run-object' }, deliver: () => undefined };
    const agent = defineAgent({ ...agentOf(setup, new InMemoryStore()), events });
    const { request, defaulted } = resolveRequest(requestOf(setup, runId), agent.defaults);
    validateRunRequest(request, { defaulted });
    return request;
  } catch (e) {
    return messageOf(e);
  }
}

/**
 * Call the factory for a new run's input, seen through its stored JSON; `bad_request` when the
 * input is too deep, the factory throws, or the library would refuse what it built. Without a
 * `childStore` the factory gets one that reaches no object (nothing is written while preparing).
 */
export async function prepareRun<Env>(
  setup: RunObjectOptions<Env>['setup'],
  ctx: Omit<RunSetupContext<Env>, 'childStore'> & { readonly childStore?: RunStore },
): Promise<Prepared | Refused> {
  let built: RunSetup;
  let stored: string;
  try {
    // The factory sees the input exactly as every resume will: through its stored JSON.
    stored = JSON.stringify(ctx.input ?? null);
    const seen = JSON.parse(stored) as unknown;
    // The core's nesting limit for stored values (what JSON drops, e.g. Infinity, the round trip already settled).
    const problem = jsonProblem(seen, 'input');
    if (problem !== null) return { ok: false, code: 'bad_request', message: `input rejected: ${problem}` };
    built = await setup({ ...ctx, input: seen, childStore: ctx.childStore ?? new ChildRunStore(ctx.runId, undefined) });
  } catch (e) {
    return { ok: false, code: 'bad_request', message: `input rejected: ${messageOf(e)}` };
  }
  const request = checked(ctx.runId, built);
  if (typeof request === 'string') return { ok: false, code: 'bad_request', message: `input rejected: ${request}` };
  return { ok: true, setup: built, request, stored };
}
