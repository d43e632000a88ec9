/**
 * `defineAgent`, `run`, `resume`: the only place the internals are woven together, and the one
 * loop. Writes follow SPEC §3 (four writes, two barriers), stops follow §4, recovery §5.
 * @module
 */
import { describeError, isPolyLoopError, RunExistsError, RunIdentityMismatchError, RunNotFoundError, StoreError } from './errors.ts';
import { assemblePrefix, messagesSize, stepHistory, toolsSize } from './internal/assembly.ts';
import { countStep, countSteps, stopAfterStep, stopBeforeModelCall } from './internal/stopping.ts';
import type { Counters } from './internal/stopping.ts';
import { classifyLog, diffSnapshots } from './internal/recovery.ts';
import type { InFlight, LogState } from './internal/recovery.ts';
import type { EventSink, RunStore, StoreWarning } from './ports.ts';
import { buildSnapshot, checkAgentConfig, checkRequest, sha256Hex } from './request.ts';
import type { AgentConfig, AgentDefinition, RunOptions, RunRequest } from './request.ts';
import { canonicalJson } from './serialization.ts';
import { RegistryExecutor } from './tools.ts';
import { RECORD_VERSION, STEP_DEFAULTS } from './types.ts';
import type {
  ActionDecision,
  ActionOutcome,
  Decision,
  Message,
  ModelReply,
  ModelToolSchema,
  ParamSnapshot,
  ReplayPolicy,
  ResultRecord,
  RunEvent,
  RunResult,
  StepRecord,
  StopReason,
} from './types.ts';

/**
 * Define an agent: the reusable, frozen half of a run (model, interpreter, store, events,
 * synthetic observation texts). One definition serves any number of concurrent runs.
 *
 * @example
 * const agent = defineAgent({ model, interpreter, store: new InMemoryStore(), events,
 *   syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } });
 */
export function defineAgent(config: AgentConfig): AgentDefinition {
  checkAgentConfig(config);
  const syntheticObservations = Object.freeze({ ...config.syntheticObservations });
  const params = Object.freeze({
    model: Object.freeze({ ...config.model.params }),
    interpreter: Object.freeze({ ...config.interpreter.params }),
    events: Object.freeze({ ...config.events.params }),
    syntheticObservations,
  });
  return Object.freeze({ ...config, syntheticObservations, params });
}

/**
 * Start a new run and drive it to its end.
 *
 * Rejects with `RunExistsError` if the run has a log, `InvalidRequestError` for a malformed
 * request, `StoreError` when the store fails (the log stays resumable), and `signal.reason`
 * when aborted (after writing `run_ended` with stop reason `cancelled`, within `cancelGraceMs`).
 *
 * @example
 * const result = await run(agent, request, { signal: AbortSignal.timeout(60_000) });
 * console.log(result.stopReason, result.finalAnswer);
 */
export function run(agent: AgentDefinition, request: RunRequest, opts: RunOptions = {}): Promise<RunResult> {
  return drive(agent, request, opts, 'run');
}

/**
 * Continue a run from its log: returns the stored result of an ended run (executing nothing),
 * otherwise recovers the interrupted step by its replay policy and drives the run to its end.
 * Rejects with `RunNotFoundError` for an empty log and `RunIdentityMismatchError` when the
 * definition or request differ from the ones the run started with; otherwise as {@link run}.
 *
 * @example
 * const result = await resume(agent, sameRequestAsBefore);
 */
export function resume(agent: AgentDefinition, request: RunRequest, opts: RunOptions = {}): Promise<RunResult> {
  return drive(agent, request, opts, 'resume');
}

async function drive(agent: AgentDefinition, request: RunRequest, opts: RunOptions, mode: 'run' | 'resume'): Promise<RunResult> {
  checkRequest(request);
  const signal = opts.signal ?? new AbortController().signal;
  signal.throwIfAborted();
  const { store } = agent;
  const { runId } = request;
  const release = store.acquire ? await guarded(runId, 'acquire', () => store.acquire!(runId, { signal }), signal) : null;
  try {
    const warnings: StoreWarning[] = [];
    const log = await guarded(runId, 'readLog', () => store.readLog(runId, { onWarning: (w) => void warnings.push(w) }), signal);
    const state = classifyLog(log);
    if (mode === 'run' && state.kind !== 'not_started') throw new RunExistsError(runId);
    if (mode === 'resume' && state.kind === 'not_started') throw new RunNotFoundError(runId);
    const snapshot = JSON.parse(canonicalJson(buildSnapshot(agent, request))) as ParamSnapshot;
    if (state.kind !== 'not_started') {
      const differing = diffSnapshots(state.started.snapshot, snapshot);
      if (differing.length > 0) throw new RunIdentityMismatchError(runId, differing);
    }
    if (state.kind === 'ended') {
      const { ended, steps } = state;
      return { runId, stopReason: ended.stopReason, finalAnswer: ended.finalAnswer, steps: ended.steps, validActions: ended.validActions, eventDeliveryFailures: ended.eventDeliveryFailures, trajectory: steps };
    }
    return await new RunDriver(agent, request, signal).drive(state, snapshot, warnings);
  } finally {
    if (release) await release().catch(() => undefined);
  }
}

/**
 * Store calls: a failure becomes `StoreError`. Reads and the lease (given `signal`) pass the
 * library's own errors through (decision 0004) and an abort while waiting as `signal.reason`.
 */
async function guarded<T>(runId: string, operation: string, fn: () => Promise<T>, readSignal?: AbortSignal): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (readSignal) {
      if (readSignal.aborted && e === readSignal.reason) throw e;
      if (isPolyLoopError(e) && e.code !== 'store_error') throw e;
    }
    throw e instanceof StoreError ? e : new StoreError(runId, operation, e);
  }
}

const IN_FLIGHT_UNKNOWN = Symbol('in_flight_unknown');

/** How a step is entered: fresh, or at the phase an interrupted step reached. */
type StepEntry = { readonly phase: 'fresh' } | InFlight;

class RunDriver {
  readonly #agent: AgentDefinition;
  readonly #req: RunRequest;
  readonly #signal: AbortSignal;
  readonly #runId: string;
  readonly #tools: readonly ModelToolSchema[];
  readonly #trajectory: StepRecord[] = [];
  /** Prefix then history, append-only: handed to the model as is, never copied per step. */
  readonly #messages: Message[] = [];
  #fixedSize = 0;
  #historySize = 0;
  #counters: Counters = { steps: 0, validActions: 0 };
  #deliveryFailures = 0;

  constructor(agent: AgentDefinition, request: RunRequest, signal: AbortSignal) {
    this.#agent = agent;
    this.#req = request;
    this.#signal = signal;
    this.#runId = request.runId;
    this.#tools = request.tools.modelSchemas();
  }

  async drive(state: Exclude<LogState, { kind: 'ended' }>, snapshot: ParamSnapshot, warnings: readonly StoreWarning[]): Promise<RunResult> {
    const req = this.#req;
    const prefix = assemblePrefix({ runContext: req.context.run, tools: this.#tools, toolRenderStyle: req.toolRenderStyle, injections: req.injections, goalContext: req.context.goal });
    this.#messages.push(...prefix);
    this.#fixedSize = messagesSize(prefix) + toolsSize(this.#tools);
    try {
      let entry: StepEntry = { phase: 'fresh' };
      if (state.kind === 'not_started') {
        const snapshotHash = await sha256Hex(canonicalJson(snapshot));
        await this.#write('runStarted', (s) => s.runStarted(this.#runId, { kind: 'run_started', v: RECORD_VERSION, runId: this.#runId, snapshot, snapshotHash, startedAt: now() }));
      } else {
        for (const step of state.steps) this.#remember(step);
        if (state.kind === 'in_flight') entry = state.inFlight;
      }
      await this.#emit({ type: 'run_started', runId: this.#runId, resumed: state.kind !== 'not_started', fromStep: this.#trajectory.length });
      for (const w of warnings) await this.#emit({ type: 'warning', runId: this.#runId, code: w.code, message: w.message });
      const last = this.#trajectory.at(-1) ?? null;
      let reason = entry.phase === 'fresh' ? stopAfterStep({ cancelled: this.#signal.aborted, step: last, counters: this.#counters, budget: req.budget }) : null;
      while (reason === null) {
        if (entry.phase === 'fresh') {
          reason = stopBeforeModelCall({ cancelled: this.#signal.aborted, contextSize: this.#fixedSize + this.#historySize, budget: req.budget });
          if (reason !== null) break;
        }
        const step = await this.#step(this.#trajectory.length, entry);
        if (step === IN_FLIGHT_UNKNOWN) {
          reason = 'in_flight_unknown';
          break;
        }
        this.#remember(step);
        entry = { phase: 'fresh' };
        reason = stopAfterStep({ cancelled: this.#signal.aborted, step, counters: this.#counters, budget: req.budget });
      }
      if (reason === 'cancelled') throw this.#signal.reason;
      return await this.#end(reason);
    } catch (e) {
      if (this.#signal.aborted) await this.#endCancelled();
      throw this.#signal.aborted ? this.#signal.reason : e;
    }
  }

  /** One step: model call, interpretation, action — entered at the phase `entry` names. */
  async #step(stepIndex: number, entry: StepEntry): Promise<StepRecord | typeof IN_FLIGHT_UNKNOWN> {
    const startedAt = now();
    const req = this.#req;
    await this.#emit({ type: 'step_started', runId: this.#runId, stepIndex });
    let reply: ResultRecord['reply'];
    if (entry.phase === 'fresh' || entry.phase === 'model_call') {
      if (entry.phase === 'model_call' && entry.intent.replayPolicy === 'never') return IN_FLIGHT_UNKNOWN;
      const called = await this.#callModel(stepIndex, entry.phase === 'model_call');
      if ('failure' in called) return this.#finishStep(stepIndex, startedAt, { decision: 'model_error', observation: called.failure }, null);
      reply = called.reply;
    } else {
      reply = entry.result.reply;
    }
    const base = { modelCallId: reply.callId, modelText: reply.text, reasoning: reply.reasoning };
    let decision: Decision;
    if (entry.phase === 'action') {
      decision = entry.action.decision;
    } else {
      try {
        decision = this.#agent.interpreter.interpret(toModelReply(reply), { tools: req.tools });
      } catch (e) {
        await this.#emit({ type: 'decision', runId: this.#runId, stepIndex, decision: 'interpreter_error', summary: describeError(e) });
        return this.#finishStep(stepIndex, startedAt, { ...base, decision: 'interpreter_error', observation: describeError(e) }, null);
      }
      await this.#emit({ type: 'decision', runId: this.#runId, stepIndex, decision: decision.kind, summary: summarize(decision) });
    }
    const history = { historyText: decision.historyText, historyContent: decision.historyContent ?? null };
    if (decision.kind === 'final') return this.#finishStep(stepIndex, startedAt, { ...base, ...history, decision: 'final', finalAnswer: decision.answer }, null);
    if (decision.kind === 'invalid') return this.#finishStep(stepIndex, startedAt, { ...base, ...history, decision: 'invalid', explanation: decision.explanation }, null);

    const resultId = `s${stepIndex}.action`;
    // No new side effect after an abort, even if the model ignored the signal and replied.
    this.#signal.throwIfAborted();
    if (entry.phase === 'action') {
      if (entry.action.replayPolicy === 'never') return IN_FLIGHT_UNKNOWN;
    } else {
      const replayPolicy = this.#replayPolicyOf(decision);
      await this.#write('intent', (s) => s.intent(this.#runId, { kind: 'intent', v: RECORD_VERSION, intent: 'action', stepIndex, resultId, replayPolicy, decision }));
    }
    await this.#emit({ type: 'action_started', runId: this.#runId, stepIndex, resultId, action: decision.action, replayed: entry.phase === 'action' });
    const { outcome, completedRun } = await this.#execute(decision, stepIndex, resultId);
    await this.#emit({ type: 'action_finished', runId: this.#runId, stepIndex, resultId, outcome });
    return this.#finishStep(
      stepIndex,
      startedAt,
      {
        ...base,
        ...history,
        decision: 'action',
        actionRepr: decision.trajectoryRepr,
        observation: outcome.observation,
        observationIsSynthetic: outcome.observationIsSynthetic,
        actionStatus: outcome.status,
        envReportedCompletion: outcome.envReportedCompletion,
        observationTruncatedChars: outcome.observationTruncatedChars,
        toolCallId: decision.action.kind === 'tool_call' ? (decision.action.id ?? null) : null,
        toolCompletedRun: completedRun,
      },
      { resultId, outcome },
    );
  }

  /** Barrier, call, result. A failure of the model is a value; abort and store failures throw. */
  async #callModel(stepIndex: number, replayed: boolean): Promise<{ reply: ResultRecord['reply'] } | { failure: string }> {
    const req = this.#req;
    const resultId = `s${stepIndex}.model`;
    const callSeq = stepIndex;
    if (!replayed) {
      await this.#write('intent', (s) => s.intent(this.#runId, { kind: 'intent', v: RECORD_VERSION, intent: 'model_call', stepIndex, callSeq, resultId, replayPolicy: req.modelReplayPolicy }));
    }
    await this.#emit({ type: 'model_call_started', runId: this.#runId, stepIndex, callSeq, resultId, replayed });
    let deltas: Promise<void> = Promise.resolve();
    const onDelta = (delta: string): void => {
      deltas = deltas.then(() => this.#emit({ type: 'model_delta', runId: this.#runId, stepIndex, callSeq, delta }));
    };
    let raw: ModelReply;
    try {
      raw = await this.#agent.model.call({ messages: this.#messages, callSeq, runId: this.#runId, resultId, binding: req.modelBinding, tools: this.#tools, signal: this.#signal, onDelta });
      if (raw.callId === '') throw new TypeError('the model caller returned callId "" (use null when there is no id)');
    } catch (e) {
      await deltas;
      this.#signal.throwIfAborted();
      const failure = describeError(e);
      await this.#emit({ type: 'model_call_finished', runId: this.#runId, stepIndex, callSeq, callId: null, error: failure });
      return { failure };
    }
    await deltas;
    const reply = { callId: raw.callId, text: raw.text, reasoning: raw.reasoning, toolCalls: raw.toolCalls ?? [], content: raw.content ?? null };
    await this.#write('result', (s) => s.result(this.#runId, resultId, { kind: 'result', v: RECORD_VERSION, resultId, stepIndex, callSeq, reply }));
    await this.#emit({ type: 'model_call_finished', runId: this.#runId, stepIndex, callSeq, callId: reply.callId, error: null });
    return { reply };
  }

  #replayPolicyOf(decision: ActionDecision): ReplayPolicy {
    const ex = this.#req.executor;
    return ex instanceof RegistryExecutor ? ex.replayPolicyFor(decision.action) : (ex.replayPolicy ?? 'never');
  }

  /** Run the action. A custom executor's throw (not abort) is an `env_error` outcome (§7). */
  async #execute(decision: ActionDecision, stepIndex: number, resultId: string): Promise<{ outcome: ActionOutcome; completedRun: boolean }> {
    const ex = this.#req.executor;
    const ctx = { runId: this.#runId, stepIndex, resultId, signal: this.#signal };
    try {
      if (ex instanceof RegistryExecutor) return await ex.executeTracked(decision.action, ctx);
      const outcome = await ex.execute(decision.action, ctx);
      const tool = decision.action.kind === 'tool_call' ? this.#req.tools.get(decision.action.name) : undefined;
      return { outcome, completedRun: outcome.status === 'executed' && tool?.completesRun === true };
    } catch (e) {
      this.#signal.throwIfAborted();
      const outcome: ActionOutcome = { status: 'env_error', observation: describeError(e), observationIsSynthetic: false, envReportedCompletion: false, observationTruncatedChars: 0 };
      return { outcome, completedRun: false };
    }
  }

  /** Build the step record, write it (atomically with the action result), announce it. */
  async #finishStep(stepIndex: number, startedAt: string, fields: Partial<StepRecord> & Pick<StepRecord, 'decision'>, actionResult: { resultId: string; outcome: ActionOutcome } | null): Promise<StepRecord> {
    const step: StepRecord = { ...STEP_DEFAULTS, stepIndex, callSeq: stepIndex, ...fields, startedAt, endedAt: now() };
    await this.#write('step', (s) => s.step(this.#runId, { kind: 'step', v: RECORD_VERSION, step, actionResult }));
    await this.#emit({ type: 'step_finished', runId: this.#runId, stepIndex, step });
    return step;
  }

  /** Add a completed step to the trajectory, the counters and the history (incrementally). */
  #remember(step: StepRecord): void {
    this.#trajectory.push(step);
    this.#counters = countStep(this.#counters, step);
    const added = stepHistory(step, this.#req.observationTemplate, this.#agent.syntheticObservations);
    this.#messages.push(...added);
    this.#historySize += messagesSize(added);
  }

  async #end(stopReason: StopReason): Promise<RunResult> {
    const finalAnswer = stopReason === 'final_answer' ? (this.#trajectory.at(-1)?.finalAnswer ?? null) : null;
    const { steps, validActions } = this.#counters;
    await this.#write('runEnded', (s) => s.runEnded(this.#runId, { kind: 'run_ended', v: RECORD_VERSION, stopReason, finalAnswer, steps, validActions, eventDeliveryFailures: this.#deliveryFailures, endedAt: now() }));
    await this.#emit({ type: 'run_ended', runId: this.#runId, stopReason, finalAnswer, steps, validActions });
    return { runId: this.#runId, stopReason, finalAnswer, steps, validActions, eventDeliveryFailures: this.#deliveryFailures, trajectory: this.#trajectory };
  }

  /** Abort wins: the same end, cancelled, raced against the grace period; its failures are swallowed. */
  async #endCancelled(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#req.cancelGraceMs)));
    await Promise.race([this.#end('cancelled').catch(() => undefined), grace]);
    if (timer !== undefined) clearTimeout(timer);
  }

  async #write(operation: string, fn: (store: RunStore) => Promise<void>): Promise<void> {
    await guarded(this.#runId, operation, () => fn(this.#agent.store));
  }

  /** Deliver in order, awaited; a failure is counted, never re-emitted. */
  async #emit(event: RunEvent): Promise<void> {
    const sink: EventSink = this.#agent.events;
    try {
      await sink.deliver(event);
    } catch {
      this.#deliveryFailures++;
    }
  }
}

function toModelReply(reply: ResultRecord['reply']): ModelReply {
  return { callId: reply.callId, text: reply.text, reasoning: reply.reasoning, toolCalls: reply.toolCalls, ...(reply.content ? { content: reply.content } : {}) };
}


function summarize(decision: Decision): string {
  if (decision.kind === 'action') return decision.trajectoryRepr;
  if (decision.kind === 'final') return decision.answer;
  return decision.explanation;
}


function now(): string {
  return new Date().toISOString();
}
