/**
 * The three seams a step calls — the model, the interpreter, the executor — each with the check
 * that makes its answer a value the run can store: the model's reply, the decision, the outcome.
 * A throw or a malformed answer is a failure of that seam, never of the run
 * (docs/design/records-and-recovery.md#seam-faults, decision 0012); an abort still throws.
 * @module
 */
import { GRACE_EXPIRED } from './cancellation.ts';
import type { Cancellation } from './cancellation.ts';
import { childRunId, endsParent, NO_CHILD_CALL } from './child-runs.ts';
import type { ChildCall, ChildOutcome } from './child-runs.ts';
import { describeError } from './errors.ts';
import type { History } from './history.ts';
import {
  decisionProblem,
  decisionShapeProblem,
  frozenJsonCopy,
  modelReplyProblem,
  outcomeProblem,
} from './internal/values.ts';
import { DELIVERED } from './outbox.ts';
import type { Outbox } from './outbox.ts';
import type { DecisionInterpreter, ModelCall } from './ports.ts';
import type { AgentDefinition, RunRequest } from './request.ts';
import { toolOf } from './action-policy.ts';
import { seal } from './sealed-records.ts';
import { readSinkHook } from './sinks.ts';
import { copyReply, freezeOutcome, freezeReply, plainOutcome, toModelReply } from './seam-values.ts';
import type { RunWrites } from './session-writes.ts';
import { RegistryExecutor } from './tools.ts';
import type { ToolRegistry, Tracked } from './tools.ts';
import { RECORD_VERSION } from './types.ts';
import type {
  ActionDecision,
  ActionOutcome,
  Decision,
  IntentRecord,
  ModelReply,
  ResultRecord,
  RunEvent,
} from './types.ts';

type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What the model is handed, and what rebuilds it when a caller changed it: the run's tool schemas,
 * and its history with the steps it keeps (the driver's, read here).
 */
export type ModelContext = {
  readonly tools: ModelCall['tools'];
  readonly history: History;
};

/**
 * The model seam of one run: the call's intent (a barrier), its deltas as events, its reply checked,
 * copied and frozen, then held to land with the step's next record. A failure of the model is a
 * value (the step's observation); an abort and a store failure throw.
 */
export class ModelSeam {
  readonly #agent: AgentDefinition;
  readonly #runId: string;
  readonly #req: RunRequest;
  readonly #cancel: Cancellation;
  readonly #signal: AbortSignal;
  readonly #writes: RunWrites;
  readonly #tools: ModelCall['tools'];
  readonly #history: History;
  /** A reply without usage under a token budget was reported once (`usage_missing`). */
  #usageMissingTold = false;

  /** What the call says of parallel tool calls: nothing (0) for one call a turn (the call stays as it always was). */
  readonly #parallel: number;
  /** The model's id for `model_call_started`, when its caller reports one. */
  readonly #model: string | undefined;
  /** The sink asked for each call's messages in `model_call_started` (a tracing sink capturing content). */
  readonly #withMessages: boolean;

  constructor(agent: AgentDefinition, req: RunRequest, cancel: Cancellation, writes: RunWrites, context: ModelContext) {
    this.#agent = agent;
    this.#runId = req.runId;
    this.#req = req;
    this.#cancel = cancel;
    this.#signal = cancel.signal;
    this.#writes = writes;
    this.#tools = context.tools;
    this.#history = context.history;
    const parallel = req.parallelToolCalls ?? 1;
    this.#parallel = parallel > 1 ? parallel : 0;
    const model = agent.model.params['model'];
    this.#model = typeof model === 'string' ? model : undefined;
    this.#withMessages = readSinkHook(agent.events, 'withMessages') === true;
  }

  /** Step `stepIndex`'s call: with its intent record first when `intent`; `replayed` for the event. */
  async call(
    stepIndex: number,
    intent: boolean,
    replayed: boolean,
  ): Promise<{ reply: ResultRecord['reply'] } | { failure: string }> {
    const req = this.#req;
    const out = this.#writes.out;
    const runId = this.#runId;
    const resultId = `s${stepIndex}.model`;
    const callSeq = stepIndex;
    if (intent) {
      const intentRecord: IntentRecord = {
        kind: 'intent',
        v: RECORD_VERSION,
        intent: 'model_call',
        stepIndex,
        callSeq,
        resultId,
        replayPolicy: req.modelReplayPolicy,
      };
      await out.write(seal(intentRecord));
    }
    // A literal with its optional fields set after, not spreads: this event goes out every step.
    const replayPolicy = req.modelReplayPolicy;
    const started: Mutable<EventOf<'model_call_started'>> = {
      type: 'model_call_started',
      runId,
      stepIndex,
      callSeq,
      resultId,
      replayed,
      replayPolicy,
    };
    if (this.#model !== undefined) started.model = this.#model;
    if (this.#withMessages) started.messages = Object.freeze(this.#history.messages.slice());
    const sent = out.emit(started);
    if (sent !== DELIVERED) await sent;
    const deltas: DeltaRelay = { out, signal: this.#signal, runId, stepIndex, sent: DELIVERED };
    const onDelta = onDeltaOf(deltas);
    let raw: unknown;
    try {
      const expected = this.#history.messages.length;
      // Called here, not in a closure handed to `seam`: a synchronous throw lands in the catch below.
      try {
        // Its optional field set after, not spread in: a spread, even of an empty object, allocates.
        const modelCall: Mutable<ModelCall> = {
          messages: this.#history.messages,
          callSeq,
          runId: this.#runId,
          resultId,
          binding: req.modelBinding,
          tools: this.#tools,
          signal: this.#signal,
          onDelta,
        };
        if (this.#parallel > 0) modelCall.parallelToolCalls = this.#parallel;
        raw = await this.#cancel.abandoning(this.#agent.model.call(modelCall));
      } finally {
        this.#history.keep(expected);
      }
      const problem = modelReplyProblem(raw);
      if (problem !== null) throw new TypeError(`the model caller returned a malformed reply: ${problem}`);
    } catch (e) {
      await deltas.sent;
      this.#signal.throwIfAborted();
      const failure = describeError(e);
      await out.emit({ type: 'model_call_finished', runId, stepIndex, callSeq, callId: null, error: failure });
      return { failure };
    }
    if (deltas.sent !== DELIVERED) await deltas.sent;
    return { reply: this.#hold(stepIndex, resultId, raw as ModelReply) };
  }

  /**
   * The reply as the step goes on with it — copied and frozen: it is written after the interpreter
   * has seen it, which must not change what lands — held with the events that wait for its write.
   */
  #hold(stepIndex: number, resultId: string, raw: ModelReply): ResultRecord['reply'] {
    const runId = this.#runId;
    const callSeq = stepIndex;
    const reply = freezeReply(copyReply(raw));
    const { callId } = reply;
    const finished: Mutable<EventOf<'model_call_finished'>> = {
      type: 'model_call_finished',
      runId,
      stepIndex,
      callSeq,
      callId,
      error: null,
    };
    if (reply.usage != null) finished.usage = reply.usage;
    if (reply.finishReason != null) finished.finishReason = reply.finishReason;
    const rec = seal<ResultRecord>({ kind: 'result', v: RECORD_VERSION, resultId, stepIndex, callSeq, reply });
    this.#writes.hold(rec, finished);
    if (reply.usage === null && this.#req.budget.maxTotalTokens !== undefined && !this.#usageMissingTold) {
      // A token budget cannot see calls that report nothing: say so once, and count them as 0.
      this.#usageMissingTold = true;
      const message = 'the model reported no token usage; budget.maxTotalTokens counts such calls as 0 tokens';
      this.#writes.emitAfterResult({ type: 'warning', runId, stepIndex, code: 'usage_missing', message });
    }
    return reply;
  }
}

/** One call's deltas on their way to the sink: `sent` is the last one's delivery, each chained after the one before. */
type DeltaRelay = {
  readonly out: Outbox;
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly stepIndex: number;
  sent: Promise<void>;
};

/**
 * The `onDelta` a call is handed: each delta a `model_delta` event, sent after the one before.
 * Returned unnamed rather than assigned to a local: a named closure made at every step costs half a
 * microsecond more where the code runs through esbuild's `keepNames` (tsx, as the bench runs it).
 */
function onDeltaOf(relay: DeltaRelay): NonNullable<ModelCall['onDelta']> {
  return (delta, kind) => {
    const { out, runId, stepIndex } = relay;
    // An abandoned call may go on streaming: nothing of it reaches the sink after an abort.
    if (relay.signal.aborted || out.closed || typeof delta !== 'string') return;
    if (kind !== undefined && kind !== 'text' && kind !== 'reasoning') return;
    // A text delta's event stays as it always was: `kind` is there only for reasoning.
    const tag = kind === 'reasoning' ? { kind } : {};
    const event: RunEvent = { type: 'model_delta', runId, stepIndex, callSeq: stepIndex, delta, ...tag };
    relay.sent = relay.sent.then(() => out.emit(event));
  };
}

/**
 * Interpret a stored reply. A throw, or a decision that breaks the contract (and so could not be
 * stored and read back), is an interpreter failure.
 */
export function interpretReply(
  interpreter: DecisionInterpreter,
  reply: ResultRecord['reply'],
  tools: ToolRegistry,
  parallelToolCalls: number,
): { decision: Decision } | { failure: string } {
  try {
    const decision: unknown = interpreter.interpret(toModelReply(reply), { tools, parallelToolCalls });
    // A frozen copy of what will be stored (the live decision equals the one a resume reads
    // back), read once: the copy is what is checked and used, so a getter or a proxy cannot
    // pass the check and then gate, log or run something else. No copy, no step: the check
    // of the original only names the problem (the step fails whatever it reads there).
    let copy: unknown;
    try {
      copy = frozenJsonCopy(decision);
    } catch (e) {
      let named: string | null = null;
      try {
        named = decisionProblem(decision);
      } catch {
        // a getter that throws again: the copy's own error says enough
      }
      throw new TypeError(`the interpreter returned a malformed decision: ${named ?? describeError(e)}`);
    }
    // The copy is plain JSON by construction: only its shape is left to check.
    const problem = decisionShapeProblem(copy);
    if (problem !== null) throw new TypeError(`the interpreter returned a malformed decision: ${problem}`);
    return { decision: copy as Decision };
  } catch (e) {
    return { failure: describeError(e) };
  }
}

/** What running an action gave: its outcome, whether it completed the run, and a sub-agent's child as it stands. */
export type Executed = {
  readonly outcome: ActionOutcome;
  readonly completedRun: boolean;
  readonly child?: ChildOutcome;
};

/**
 * The run id of the child `decision` runs as `resultId` when its tool is a sub-agent's (`agentTool`)
 * and its arguments are valid (a call refused for them starts no child), else null.
 */
export function childOfAction(req: RunRequest, decision: ActionDecision, resultId: string): string | null {
  const ex = req.executor;
  const { action } = decision;
  if (!(ex instanceof RegistryExecutor) || !ex.runsChild(action) || !req.tools.validate(action).ok) return null;
  return childRunId(req.runId, resultId);
}

/**
 * Run the action. A custom executor's throw (not abort) or malformed outcome is `env_error`.
 * `call` is what a sub-agent's call carries to its child: a person's reply, a deploy's upgrade.
 */
export async function executeAction(
  req: RunRequest,
  cancel: Cancellation,
  decision: ActionDecision,
  stepIndex: number,
  resultId: string,
  call: ChildCall = NO_CHILD_CALL,
): Promise<Executed> {
  const ex = req.executor;
  const { signal } = cancel;
  const ctx = { runId: req.runId, stepIndex, resultId, signal };
  if (ex instanceof RegistryExecutor && ex.runsChild(decision.action)) {
    return executeChild(ex, cancel, decision, ctx, call);
  }
  try {
    const tool = startTool(req, cancel, decision, stepIndex, resultId);
    if (tool !== null) return toolRan(await tool);
    const raw: unknown = await cancel.seam(() => ex.execute(decision.action, ctx));
    const problem = outcomeProblem(raw);
    if (problem !== null) throw new TypeError(`the executor returned a malformed outcome: ${problem}`);
    const outcome = freezeOutcome(raw as ActionOutcome);
    const completedRun = outcome.status === 'executed' && toolOf(req, decision)?.completesRun === true;
    return { outcome, completedRun };
  } catch (e) {
    return toolFailed(signal, e);
  }
}

/**
 * {@link executeAction}'s call of a registry's own tool (not a sub-agent's), started: what the
 * loop awaits itself, every step, rather than through a layer of its own (then {@link toolRan} or,
 * for a rejection, {@link toolFailed}). Null for any other action.
 */
export function startTool(
  req: RunRequest,
  cancel: Cancellation,
  decision: ActionDecision,
  stepIndex: number,
  resultId: string,
): Promise<Tracked> | null {
  const ex = req.executor;
  if (!(ex instanceof RegistryExecutor) || ex.runsChild(decision.action)) return null;
  try {
    const ctx = { runId: req.runId, stepIndex, resultId, signal: cancel.signal };
    return cancel.abandoning(ex.executeTracked(decision.action, ctx));
  } catch (e) {
    return Promise.reject(e);
  }
}

/** What a registry's call gave, as the run keeps it: its outcome copied and frozen. */
export function toolRan(tracked: Tracked): Executed {
  return { outcome: freezeOutcome(tracked.outcome), completedRun: tracked.completedRun };
}

/** An action that threw or failed its check: `env_error`, unless the run was aborted (then its reason throws). */
export function toolFailed(signal: AbortSignal, e: unknown): Executed {
  signal.throwIfAborted();
  return { outcome: plainOutcome('env_error', describeError(e)), completedRun: false };
}

/**
 * A sub-agent's call. It is not abandoned at an abort like other seams: the child has the same
 * signal and writes its own end, and the parent waits for that (at most its grace period), so a
 * cancelled parent leaves no child running. A failure of the child's store ends the parent too.
 */
async function executeChild(
  ex: RegistryExecutor,
  cancel: Cancellation,
  decision: ActionDecision,
  ctx: { readonly runId: string; readonly stepIndex: number; readonly resultId: string; readonly signal: AbortSignal },
  call: ChildCall,
): Promise<Executed> {
  const { signal } = cancel;
  const linked = cancel.linked();
  try {
    const childCtx = { ...ctx, signal: linked.signal };
    const tracked = await cancel.bounded(() => ex.executeTracked(decision.action, childCtx, call)).settled;
    if (tracked === GRACE_EXPIRED) throw signal.reason;
    signal.throwIfAborted();
    return { ...tracked, outcome: freezeOutcome(tracked.outcome) };
  } catch (e) {
    signal.throwIfAborted();
    if (endsParent(e)) throw e;
    return { outcome: plainOutcome('env_error', describeError(e)), completedRun: false };
  } finally {
    linked.release();
  }
}
