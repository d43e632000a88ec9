/**
 * What a user gives the run Durable Object: the factory that builds each run (and how its
 * output is checked before a run is stored), and the object's options, checked once when the
 * class is made.
 * @module
 */
import { checkOptionKeys, defineAgent, InMemoryStore, jsonProblem, validateRunRequest } from '../core/index.ts';
import type { AgentConfig, DecisionInterpreter, EventSink, ModelCaller, OptionKeys, RunRequest, RunStore, SyntheticObservations } from '../core/index.ts';
import type { RunIndexNamespace } from './run-report.ts';

/** What the user's factory returns for one run: the agent's seams and the request (the run id is the object's). */
export type RunSetup = {
  readonly model: ModelCaller;
  readonly interpreter: DecisionInterpreter;
  readonly syntheticObservations: SyntheticObservations;
  readonly request: Omit<RunRequest, 'runId'>;
  /** Optional extra sink that receives every event too (logging, metrics). Not part of the run's identity. */
  readonly events?: EventSink;
};

/** What the factory is given: the Worker's env, the run id and the `input` of `POST /runs` as stored (a JSON round trip, the same at start and at every resume). */
export type RunSetupContext<Env> = { readonly env: Env; readonly runId: string; readonly input: unknown };

/** Options of {@link createRunObject}. */
export type RunObjectOptions<Env> = {
  /**
   * Build the run from its input. Called when the run starts (a throw rejects the input: HTTP 400,
   * nothing is stored) and again, with the same stored input, whenever the run is resumed after
   * eviction — so it must be deterministic: the same input gives the same agent and request.
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
};

/** The outcome of {@link RunObjectBase.start}: ok, or why not (a value, since errors lose their class over RPC). */
export type StartOutcome = { readonly ok: true } | { readonly ok: false; readonly code: 'conflict' | 'bad_request'; readonly message: string };

const RUN_OBJECT_OPTIONS: OptionKeys<RunObjectOptions<unknown>> = {
  setup: true,
  resumeAfterMs: true,
  maxFailedDrives: true,
  keepAliveMs: true,
  index: true,
};
const SETUP_FIELDS: OptionKeys<RunSetup> = { model: true, interpreter: true, syntheticObservations: true, request: true, events: true };

/**
 * Throws `InvalidRequestError` for a key that is not an option (naming the nearest one), and a
 * TypeError naming an option that would make the alarm spin, never fire, or the keep-alive misbehave.
 */
export function checkOptions<Env>(options: RunObjectOptions<Env>): void {
  checkOptionKeys(options, RUN_OBJECT_OPTIONS, 'createRunObject');
  const { resumeAfterMs, maxFailedDrives, keepAliveMs } = options;
  if (resumeAfterMs !== undefined && !(Number.isFinite(resumeAfterMs) && resumeAfterMs > 0)) {
    throw new TypeError(`createRunObject: resumeAfterMs must be a positive number of milliseconds, got ${resumeAfterMs}`);
  }
  if (maxFailedDrives !== undefined && !(Number.isInteger(maxFailedDrives) && maxFailedDrives > 0)) {
    throw new TypeError(`createRunObject: maxFailedDrives must be a positive integer, got ${maxFailedDrives}`);
  }
  if (keepAliveMs !== undefined && !(Number.isFinite(keepAliveMs) && keepAliveMs >= 0)) {
    throw new TypeError(`createRunObject: keepAliveMs must be 0 (off) or a positive number of milliseconds, got ${keepAliveMs}`);
  }
}

/** A new run's input, checked: the factory's setup and the input as stored (JSON). */
export type Prepared = { readonly ok: true; readonly setup: RunSetup; readonly stored: string };

/** Why a start or import is refused. */
export type Refused = Extract<StartOutcome, { readonly ok: false }>;

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The agent seams of a setup, over `store`. */
export function seamsOf(setup: RunSetup, store: RunStore): Pick<AgentConfig, 'model' | 'interpreter' | 'store' | 'syntheticObservations'> {
  return { model: setup.model, interpreter: setup.interpreter, store, syntheticObservations: setup.syntheticObservations };
}

/** Why the library would refuse what the factory built (invalid agent or request), or null. */
function refusal(runId: string, setup: RunSetup): string | null {
  try {
    checkOptionKeys(setup, SETUP_FIELDS, 'what setup returned');
    defineAgent({ ...seamsOf(setup, new InMemoryStore()), events: { params: { sink: 'run-object' }, deliver: () => undefined } });
    validateRunRequest({ ...setup.request, runId });
  } catch (e) {
    return messageOf(e);
  }
  return null;
}

/**
 * Call the factory for a new run's input, seen through its stored JSON; `bad_request` when the
 * input is too deep, the factory throws, or the library would refuse what it built.
 */
export async function prepareRun<Env>(setup: RunObjectOptions<Env>['setup'], ctx: RunSetupContext<Env>): Promise<Prepared | Refused> {
  let built: RunSetup;
  let stored: string;
  try {
    // The factory sees the input exactly as every resume will: through its stored JSON.
    stored = JSON.stringify(ctx.input ?? null);
    const seen = JSON.parse(stored) as unknown;
    // The core's nesting limit for stored values (what JSON drops, e.g. Infinity, the round trip already settled).
    const problem = jsonProblem(seen, 'input');
    if (problem !== null) return { ok: false, code: 'bad_request', message: `input rejected: ${problem}` };
    built = await setup({ ...ctx, input: seen });
  } catch (e) {
    return { ok: false, code: 'bad_request', message: `input rejected: ${messageOf(e)}` };
  }
  const refused = refusal(ctx.runId, built);
  if (refused !== null) return { ok: false, code: 'bad_request', message: `input rejected: ${refused}` };
  return { ok: true, setup: built, stored };
}
