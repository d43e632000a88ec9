/**
 * The five seams of the loop: model, interpreter, executor, store, events.
 * This module imports only `types.ts` (docs/design/README.md#dependency-rules, rule 2).
 * @module
 */
import type {
  Action,
  ActionIntentRecord,
  ActionOutcome,
  ActionsIntentRecord,
  CallResultRecord,
  Decision,
  InputRecord,
  InputRequestRecord,
  IntentRecord,
  LogRecord,
  Message,
  ModelReply,
  ModelToolSchema,
  ReplayPolicy,
  ResultRecord,
  RunEndedRecord,
  RunEvent,
  RunResult,
  RunStartedRecord,
  SeamParams,
  StepWriteRecord,
  StopRequest,
  ToolCatalog,
  UpgradeRecord,
  ResumedRecord,
} from './types.ts';

/** One model call, as the library assembled it. */
export type ModelCall = {
  /**
   * The assembled context: run context, tools, injections, goal, history. Valid for the
   * duration of the call: the library appends the next turns to this same array after the call
   * settles (no O(history) copy per step), and under a `historyWindow` removes the oldest step's,
   * so a caller that keeps messages must copy them. The messages themselves are frozen; a caller
   * that changes the array anyway (shifts the system message out, empties or freezes it, replaces
   * its first or last message) changes nothing the run relies on: the loop rebuilds its history
   * from the steps it keeps.
   */
  readonly messages: readonly Message[];
  /** 0, 1, 2 … within this run. */
  readonly callSeq: number;
  readonly runId: string;
  /** Pre-assigned and deterministic (`s{stepIndex}.model`): the same on a re-issued call. */
  readonly resultId: string;
  /** `RunRequest.modelBinding`, untouched. */
  readonly binding: Readonly<Record<string, string>>;
  /** `RunRequest.tools.modelSchemas()`; `[]` when the registry is empty. Text protocols ignore it. */
  readonly tools: readonly ModelToolSchema[];
  readonly signal: AbortSignal;
  /**
   * `RunRequest.parallelToolCalls`, present only above 1: the run takes several tool calls in one
   * reply, so an adapter may ask its provider for parallel calls. Absent: one call a turn.
   */
  readonly parallelToolCalls?: number;
  /**
   * Streaming callers may report deltas here as they arrive; they become `model_delta` events.
   * `kind` says what the delta belongs to: the reply's text (`'text'`, or absent) or its
   * reasoning (`'reasoning'`, the event then carries `kind: 'reasoning'`). A delta of any other
   * kind, or one that is not a string, is ignored. The returned reply stays the whole truth:
   * deltas only show it sooner.
   */
  readonly onDelta?: (delta: string, kind?: 'text' | 'reasoning') => void;
};

/** Calls a model. */
export interface ModelCaller {
  /** Must contain `model: string`: which model this is goes into the run's identity. */
  readonly params: SeamParams;
  /**
   * Make one call.
   *
   * Contract: rejects on any model failure (the library records a `model_error` step and stops);
   * rejects with `call.signal.reason` when aborted; is not retried by the library — retries,
   * backoff and rate limits belong to the client behind this seam. `callId` must not be `''`.
   * A reply of the wrong shape (checked with `modelReplyProblem`) is a model failure too, so
   * nothing unreadable is ever stored. A call that ignores the signal is abandoned at the abort:
   * whatever it returns later is dropped, and its `onDelta` reaches no sink.
   */
  call(call: ModelCall): Promise<ModelReply>;
}

/** What an interpreter reads a reply against. */
export type InterpretContext = {
  readonly tools: ToolCatalog;
  /**
   * The most calls the run may run at once (`request.parallelToolCalls`, default 1). Above 1, a
   * reply holding several calls may be read as one `actions` decision; at 1 the run takes such a
   * decision as an invalid reply, as the model was told to make one call a turn. Absent: 1.
   */
  readonly parallelToolCalls?: number;
};

/** Reads a model reply into a decision. */
export interface DecisionInterpreter {
  readonly params: SeamParams;
  /**
   * Interpret one reply.
   *
   * Contract: synchronous and pure — the same reply and context give the same decision; it is
   * called at most once per completed step (completed steps are never re-interpreted). A throw,
   * or a decision of the wrong shape (including action arguments that are not plain JSON within
   * `MAX_JSON_DEPTH` levels), ends the run with `interpreter_error`.
   */
  interpret(reply: ModelReply, ctx: InterpretContext): Decision;
}

/** What an executor is told besides the action. */
export type ExecuteContext = {
  readonly runId: string;
  readonly stepIndex: number;
  /**
   * Pre-assigned and deterministic (`s{stepIndex}.action`; `s{stepIndex}.a{j}` for call j of a step with
   * several): the same on a replayed action.
   */
  readonly resultId: string;
  readonly signal: AbortSignal;
};

/** Runs actions in an environment. */
export interface ActionExecutor {
  /** Optional: goes into the run's identity when present. */
  readonly params?: SeamParams;
  /**
   * The policy of actions that name no tool of `request.tools` (and of code actions); defaults
   * to `'never'`. For an action naming a known tool the tool's own policy holds: an explicit
   * `'never'` here makes it stricter, `'safe'` never loosens it. In the run's identity when set.
   */
  readonly replayPolicy?: ReplayPolicy;
  /**
   * Optional: whether a person must approve `action` before it runs. Asked only about
   * actions that validate; a tool's own `needsApproval: true` asks anyway. Must be pure.
   */
  needsApproval?(action: Action): boolean;
  /**
   * Execute one action.
   *
   * Contract: resolves with an outcome for every action, including ones it cannot run
   * (`not_executed`) and a broken environment (`env_error`); rejects with `ctx.signal.reason`
   * when aborted (an executor that ignores the signal is abandoned at the abort). Any other
   * rejection, or an outcome of the wrong shape, is recorded as `env_error`. Next to a non-empty
   * `request.tools` it only ever receives tool calls that validate against them. Idempotent only if its
   * replay policy says `safe`: a `safe` action may be executed again with the same `resultId`.
   */
  execute(action: Action, ctx: ExecuteContext): Promise<ActionOutcome>;
}

/** Something a store noticed and repaired or skipped while reading — never fatal. */
export type StoreWarning = { readonly code: string; readonly message: string };

/** Options of {@link RunStore.readLog}. */
export type ReadLogOptions = {
  /** Told about what the read repaired or skipped (a torn last line); `run`/`resume` turn it into `warning` events. */
  readonly onWarning?: (warning: StoreWarning) => void;
};

/** What {@link RunStore.readLogLines} resolves to. */
export type StoredLines = { readonly lines: readonly string[]; readonly source: string };

/**
 * Releases a run lease taken by {@link RunStore.acquire}. A store that can lose a lease, or take a
 * stop request, gives it `lost`: a signal aborted when the lease is lost (reason `LeaseLostError`) or
 * a stop is requested (reason `StopRequestedError`; already aborted at `acquire` when one was asked
 * while no driver ran). The loop joins it to the run's cancellation and to every handler's signal.
 */
export type ReleaseLease = (() => Promise<void>) & { readonly lost?: AbortSignal };

/**
 * Durable storage for run logs. Every method takes the runId; there is no hidden current run.
 * Stores have no `params`: where a log lives is not part of a run's identity.
 */
export interface RunStore {
  /**
   * Write the first record of a run.
   *
   * Contract: resolves when the record landed (durability at the store's discretion, documented
   * per store); rejects on I/O failure. Not idempotent: call once per run.
   */
  runStarted(runId: string, rec: RunStartedRecord): Promise<void>;
  /**
   * Write a model-call or action intent. A barrier — except a model-call intent whose
   * `replayPolicy` is `'safe'` (`isBarrier` says which): losing that one leaves the step at its
   * boundary, and recovery would re-issue the call anyway.
   *
   * Contract: a barrier resolves only when the record is durable (survives a process crash); a
   * store may make a non-barrier intent durable later (with the next barrier), never out of order.
   * Rejects on I/O failure, after which the record may or may not have landed.
   */
  intent(runId: string, rec: IntentRecord): Promise<void>;
  /**
   * Optional: write a model-call result and the action intent interpreted from it as one
   * atomic write, a barrier (decision 0040). The loop calls it instead of `result` then `intent`
   * when an action follows its reply at once; a store without it gets the two calls.
   *
   * Contract: all-or-nothing, in this order; durable when it resolves, as {@link RunStore.intent}.
   */
  resultAndIntent?(
    runId: string,
    result: ResultRecord,
    intent: ActionIntentRecord | ActionsIntentRecord,
  ): Promise<void>;
  /**
   * Write a model-call result under its pre-assigned `resultId`.
   *
   * Contract: lands on its own; need not be durable when it resolves (a lost result makes the
   * model call in flight again, which recovery handles by its replay policy).
   */
  result(runId: string, resultId: string, rec: ResultRecord): Promise<void>;
  /**
   * Write the action result (if any) and the step record as one atomic write.
   *
   * Contract: all-or-nothing — after a crash either both are in the log or neither is.
   */
  step(runId: string, rec: StepWriteRecord): Promise<void>;
  /**
   * Read a run's records in write order; `[]` for a run never written.
   *
   * Contract: never takes the lease; returns decoded records that the caller may not mutate;
   * a torn last record is dropped and reported to `opts.onWarning`, a corrupt one elsewhere
   * rejects with `CorruptLogError`; other failures reject (the library wraps them in `StoreError`).
   */
  readLog(runId: string, opts?: ReadLogOptions): Promise<readonly LogRecord[]>;
  /**
   * Optional: a run's log as the lines the store holds, each the text its `LogCodec` wrote for one
   * record (the lean form), for a reader that does not need every record built (`resume`: see
   * docs/design/run-log.md#reading-a-log-fast). A store that keeps its log as text has it at hand.
   *
   * Contract: as {@link RunStore.readLog} — every line in write order, from the log's first; a torn
   * last line dropped and reported to `opts.onWarning`; `lines: []` for a run never written.
   * `source` names the log in a `CorruptLogError` (a path).
   */
  readLogLines?(runId: string, opts?: ReadLogOptions): Promise<StoredLines>;
  /**
   * Write the last record of a run.
   *
   * Contract: resolves when the record landed; rejects on I/O failure.
   */
  runEnded(runId: string, rec: RunEndedRecord): Promise<void>;
  /**
   * Write an input request (docs/design/human-input.md): the run asks a person and waits. A barrier.
   *
   * Contract: as {@link RunStore.intent} — durable when it resolves. Every PolyLoop store has it;
   * a store without it cannot host human input (a run that needs it fails with `StoreError`).
   */
  inputRequest?(runId: string, rec: InputRequestRecord): Promise<void>;
  /**
   * Write a person's reply, before it is carried out. A barrier.
   *
   * Contract: as {@link RunStore.intent} — durable when it resolves.
   */
  input?(runId: string, rec: InputRecord): Promise<void>;
  /**
   * Write an `upgrade` record: the run goes on under a new identity (docs/upgrades.md). A barrier.
   *
   * Contract: as {@link RunStore.intent} — durable when it resolves. Every PolyLoop store has it;
   * a store without it cannot upgrade a run (`resume` with `upgrade` fails with `StoreError`,
   * nothing written).
   */
  upgrade?(runId: string, rec: UpgradeRecord): Promise<void>;
  /**
   * Write the outcome of one call of a step with several, as it lands (docs/design/step.md#several-calls-a-step).
   * Not a barrier: a lost outcome leaves its call in flight, which recovery handles by its replay policy.
   *
   * Contract: as {@link RunStore.result}. Every PolyLoop store has it; a store without it cannot run
   * several calls a step: `run`/`resume` with `parallelToolCalls` above 1 reject with `StoreError`
   * (operation `callResult`) before anything is written or called.
   */
  callResult?(runId: string, rec: CallResultRecord): Promise<void>;
  /**
   * Write a `resumed` record: a driver took the run over from its log
   * (docs/design/run-log.md#where-each-driver-took-over). Not a barrier, and optional: a store
   * without it runs resumed runs as before, only without the marks (and `importRun` of a log
   * holding them into it is refused, so nothing is dropped silently).
   *
   * Contract: as {@link RunStore.result}.
   */
  resumed?(runId: string, rec: ResumedRecord): Promise<void>;
  /**
   * Optional single-driver lease, for stores several processes or tabs can open.
   *
   * Contract: resolves with a release function once this caller is the only driver of the run;
   * rejects with `RunLockedError` when another driver holds it (or waits, where the store is
   * configured to); rejects with `opts.signal.reason` when aborted while waiting. Release is
   * idempotent.
   */
  acquire?(runId: string, opts: { readonly signal?: AbortSignal }): Promise<ReleaseLease>;
  /**
   * Optional: keep a stop request for the run where whichever process or tab holds its lease sees
   * it (docs/design/control.md#a-stop-that-reaches-any-driver). Call it through `requestStop`,
   * which checks the run exists and has not ended.
   *
   * Contract: resolves once the request is durable. The lease holder's `lost` signal then aborts
   * with `StopRequestedError(runId, stop)` within a second, wherever it runs; while no driver holds
   * the lease, the next `acquire` resolves with `lost` already aborted so. A store with this method
   * has `acquire`.
   */
  requestStop?(runId: string, stop: StopRequest): Promise<void>;
}

/** Receives run events. */
export interface EventSink {
  readonly params: SeamParams;
  /**
   * Deliver one event.
   *
   * Contract: events arrive in order and each delivery is awaited before the next; a throw or
   * rejection is caught and counted in `RunResult.eventDeliveryFailures`, never re-emitted, and
   * the run goes on. Events are frozen (a sink cannot change what the run goes on with: writing
   * to one throws in strict code, which counts as a failure). A delivery still pending when the
   * signal aborts is abandoned; the `run_ended` of a cancelled run waits at most `cancelGraceMs`.
   * No event follows `run_ended`.
   */
  deliver(event: RunEvent): void | Promise<void>;
  /**
   * Optional, for tracing sinks (`polyloop/otel`): the W3C `traceparent` of the span the sink opens
   * for the run's first driver. Asked once, synchronously, just before `run_started` is written, which
   * keeps it; every later driver's `run_started` event carries it back, so the sink can link that
   * driver's span to the first (docs/design/run-log.md#where-each-driver-took-over). Return undefined
   * to keep none. A throw or a malformed value counts as a failed delivery; the run goes on untraced.
   */
  traceparent?(runId: string): string | undefined;
  /**
   * Optional: true when the sink wants each `model_call_started` event to carry `messages`, a
   * frozen copy of what the model is given (copying costs a tracing sink that captures content;
   * other sinks leave this out and pay nothing).
   */
  readonly withMessages?: boolean;
  /**
   * Optional: told once when `run` or `resume` settles, after the run's last event, for every driver
   * session the sink heard of (its `run_started` was delivered or its `traceparent` asked): with the
   * result (a pause for input included: `stopReason: 'awaiting_input'`), or with what it rejected
   * with (a store failure, a lost lease, the caller's abort). A tracing sink ends the session's span
   * here. Synchronous; a throw is ignored (the run has settled).
   */
  settled?(runId: string, outcome: SettledRun): void;
}

/** How a driver session ended, as {@link EventSink.settled} is told: its result, or the error it rejected with. */
export type SettledRun = { readonly result: RunResult } | { readonly error: unknown };
