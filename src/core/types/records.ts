/**
 * The records of a run log (docs/log-format.md): the step record and its canonical fields, the
 * record schema version, each record kind, why a run ended (the human-input request and reply: `input.ts`).
 * Imports only its sibling type modules (docs/design/README.md#dependency-rules, rule 2).
 * @module
 */
import type { ActionDecision, ActionOutcome, ActionsDecision, ReplayPolicy, StepActionStatus } from './decisions.ts';
import type { InputRecord, InputRequestRecord } from './input.ts';
import type { ContentBlock, FinishReason, JsonObject, JsonValue, ToolCallRequest, Usage } from './messages.ts';

/**
 * Why a run ended, in the order the stop decision checks them (docs/design/step.md#the-stop-decision);
 * `in_flight_unknown` last.
 */
export const STOP_REASONS = [
  'cancelled',
  'model_error',
  'interpreter_error',
  'final_answer',
  'env_error',
  'env_completed',
  'tool_completed',
  'max_valid_actions',
  'max_steps',
  'max_tokens',
  'context_limit',
  'in_flight_unknown',
] as const;

/** Why a run ended: what a `run_ended` record holds. */
export type EndReason = (typeof STOP_REASONS)[number];

/** Why `run`/`resume` resolved: a run's end, or `awaiting_input` (it waits for a person; never in a record). */
export type StopReason = EndReason | 'awaiting_input';

/** What kind of step a step record describes. */
export type StepDecisionKind = 'action' | 'final' | 'invalid' | 'model_error' | 'interpreter_error';

/**
 * One completed step of the trajectory. Field names are fixed
 * (docs/log-format.md#step--one-finished-step-with-its-action-result).
 */
export type StepRecord = {
  readonly stepIndex: number;
  readonly callSeq: number;
  readonly modelCallId: string | null;
  readonly modelText: string | null;
  readonly reasoning: string | null;
  readonly decision: StepDecisionKind;
  readonly actionRepr: string | null;
  readonly historyText: string | null;
  readonly historyContent: readonly ContentBlock[] | null;
  readonly observation: string | null;
  readonly observationIsSynthetic: boolean;
  readonly actionStatus: StepActionStatus | null;
  readonly envReportedCompletion: boolean;
  readonly observationTruncatedChars: number;
  readonly finalAnswer: string | null;
  readonly explanation: string | null;
  /** The provider's tool-call id of the action that ran, or null (the default). */
  readonly toolCallId: string | null;
  /** A `completesRun` tool ran and its handler returned normally (stop reason `tool_completed`). Default false. */
  readonly toolCompletedRun: boolean;
  /** Tokens the step's model call used, when the model reported them. Null in 1.0 records (decoding fills it in). */
  readonly usage?: Usage | null;
  /** Why the step's model call stopped, when the model said. Absent from 1.0 records: null. */
  readonly finishReason?: FinishReason | null;
  readonly startedAt: string;
  readonly endedAt: string;
  /**
   * A step that ran several calls: each call's outcome, in the provider's order
   * (docs/design/step.md#several-calls-a-step). Absent from every other step, which keeps its 1.1 shape.
   */
  readonly calls?: readonly CallRecord[];
  /**
   * A one-call step whose action ran a sub-agent: the child run's id (docs/design/sub-agents.md).
   * Absent from every other step.
   */
  readonly childRunId?: string;
};

/**
 * What became of one call of a step with several: its outcome (`denied` when a person refused it:
 * nothing ran), and whether it ended the run as a `completesRun` tool.
 */
export type CallRecord = {
  readonly resultId: string;
  readonly toolCallId: string | null;
  readonly actionRepr: string;
  readonly status: StepActionStatus;
  readonly observation: string;
  readonly observationIsSynthetic: boolean;
  readonly envReportedCompletion: boolean;
  readonly observationTruncatedChars: number;
  readonly toolCompletedRun: boolean;
  /** The call ran a sub-agent: the child run's id. Absent otherwise. */
  readonly childRunId?: string;
};

/**
 * Every field of the step record with its default, in the canonical key order (live and decoded
 * records list keys in this order): what a step starts from before its facts are known, and what a
 * decoder fills in for a field an older writer did not write. `stepIndex` and `decision` are always
 * set (a decoder refuses a step without them), `callSeq` too (it defaults to `stepIndex`).
 * Spread first, it keeps that order.
 */
export const STEP_DEFAULTS = /* @__PURE__ */ Object.freeze({
  stepIndex: 0,
  callSeq: 0,
  modelCallId: null,
  modelText: null,
  reasoning: null,
  decision: 'model_error',
  actionRepr: null,
  historyText: null,
  historyContent: null,
  observation: null,
  observationIsSynthetic: false,
  actionStatus: null,
  envReportedCompletion: false,
  observationTruncatedChars: 0,
  finalAnswer: null,
  explanation: null,
  toolCallId: null,
  toolCompletedRun: false,
  usage: null,
  finishReason: null,
  startedAt: '',
  endedAt: '',
} as const satisfies Required<Omit<StepRecord, 'calls' | 'childRunId'>>);

/** The step record's fields in their canonical order: the keys of {@link STEP_DEFAULTS}. */
export const STEP_FIELDS = /* @__PURE__ */ Object.freeze(
  /* @__PURE__ */ Object.keys(STEP_DEFAULTS),
) as readonly (keyof StepRecord)[];

/**
 * Record schema version. History:
 * - 1.0 — first version: run_started, intent, result, step, run_ended.
 * - 1.1 — human input: input_request and input records; step `actionStatus: 'denied'`.
 *   Reply metadata: result `reply.finishReason/usage/providerMetadata`, step `usage`
 *   and `finishReason`, run_ended `usage` (all defaulted when absent); the `opaque` block.
 *   1.0 logs still decode and resume (a 1.0 run that ended `in_flight_unknown` stays ended).
 * - 1.2 — runs that outlive their code: `run_started.request` (what `resume(agent, runId)` needs
 *   beyond the snapshot) and the `upgrade` record. Several calls a step: the `actions` intent, the
 *   `call_result` record, step `calls`. Sub-agents: input requests of kind `child`, step and call
 *   `childRunId`. A person in control: `run_started.forkedFrom`, `run_ended.stopRequest`, an
 *   approval's `input.reply.arguments`. Observability: `run_started.traceparent`, the `resumed` record.
 *   A run that uses none of them, and is never resumed, writes records shaped as in 1.1.
 */
export const RECORD_VERSION = '1.2';

/** The merged parameter snapshot a run's identity is made of. */
export type ParamSnapshot = JsonObject;

/**
 * What a log keeps of a request beyond its snapshot, so `resume(agent, runId)` can rebuild it:
 * the snapshot already holds every data field of the identity (context, injections, budget,
 * binding, replay policy, template, render style); this adds the cancel grace and which fields
 * the agent's defaults filled (those follow the agent's current defaults on a resume by id).
 */
export type StoredRequest = {
  readonly cancelGraceMs: number;
  /** Request fields the agent's defaults filled (`context.run`, `context.goal`, `budget`, …), sorted. */
  readonly defaulted: readonly string[];
};

/** First record of every run. */
export type RunStartedRecord = {
  readonly kind: 'run_started';
  readonly v: string;
  readonly runId: string;
  readonly snapshot: ParamSnapshot;
  readonly snapshotHash: string;
  /** Added in 1.2; absent in older logs, which `resume(agent, runId)` cannot rebuild a request from. */
  readonly request?: StoredRequest;
  /** Added in 1.2: the run is a fork of another (`forkRun`), made at `atStep` of `runId`. */
  readonly forkedFrom?: ForkOrigin;
  /**
   * Added in 1.2: the W3C trace context (`00-{trace id}-{span id}-{flags}`) of the span that stood
   * for the run's first driver, when its event sink opened one (an OpenTelemetry sink): every later
   * driver's span links to it, so a run that crashed and went on elsewhere is one trace.
   */
  readonly traceparent?: string;
  readonly startedAt: string;
};

/**
 * How resume carries on an interrupted step (docs/design/records-and-recovery.md#the-interrupted-step): call
 * the model again with the same resultId (`reissue_model`), interpret the stored reply (`reinterpret`),
 * execute the recorded action again (`replay_action`), ask a person to settle an operation whose replay
 * policy is `never` (`settle`), wait for the reply to an open request (`await_input`), or carry out a reply
 * that landed (`apply_input`). A step with several calls whose requests are all answered goes on with
 * `run_calls`: each call as its own records say (docs/design/step.md#several-calls-a-step).
 */
export type InFlightResolution =
  | 'reissue_model'
  | 'reinterpret'
  | 'replay_action'
  | 'settle'
  | 'await_input'
  | 'apply_input'
  | 'run_calls';

/**
 * Not a barrier: a driver took the run over from its log and carries it on (docs/design/run-log.md).
 * `stepIndex` is the step it carries on (the next one at a boundary); `resolution` how it goes on
 * with that step's interrupted work, null at a boundary. Readers use it to mark the steps a later
 * driver carried out; it changes nothing a run does. Added in 1.2.
 */
export type ResumedRecord = {
  readonly kind: 'resumed';
  readonly v: string;
  readonly stepIndex: number;
  readonly resolution: InFlightResolution | null;
  readonly at: string;
};

/** Where a forked run came from: its source run and the step it was forked at. */
export type ForkOrigin = { readonly runId: string; readonly atStep: number };

/** A stop asked of a run with `requestStop`, and the reason given, if any. */
export type StopRequest = { readonly reason?: string };

/**
 * One changed top-level key of the identity snapshot: hashes of its canonical JSON, and the new
 * value (absent: the key is gone).
 */
export type UpgradeChange = {
  readonly before: string | null;
  readonly after: string | null;
  readonly value?: JsonValue;
};

/**
 * Barrier: the run goes on under a new identity from `stepIndex` (the first step run under it).
 * `changes` holds every top-level snapshot key that changed; the snapshot in force is
 * `run_started.snapshot` with each upgrade's values laid over it, and `snapshotHash` is its hash.
 */
export type UpgradeRecord = {
  readonly kind: 'upgrade';
  readonly v: string;
  readonly stepIndex: number;
  readonly reason: string;
  readonly changes: { readonly [key: string]: UpgradeChange };
  readonly snapshotHash: string;
  readonly request: StoredRequest;
  readonly at: string;
};

/** Barrier before a model call: written and durable before the call is made. */
export type ModelCallIntentRecord = {
  readonly kind: 'intent';
  readonly v: string;
  readonly intent: 'model_call';
  readonly stepIndex: number;
  readonly callSeq: number;
  readonly resultId: string;
  readonly replayPolicy: ReplayPolicy;
};

/** Barrier before an action runs. Holds the whole decision so replay never re-interprets. */
export type ActionIntentRecord = {
  readonly kind: 'intent';
  readonly v: string;
  readonly intent: 'action';
  readonly stepIndex: number;
  readonly resultId: string;
  readonly replayPolicy: ReplayPolicy;
  readonly decision: ActionDecision;
};

/**
 * How one call of a step with several goes: its pre-assigned `resultId` (`s{i}.a{j}`), its replay
 * policy, whether a person approves or answers it first, and `skip`: the observation of a call that
 * will not run (the library refused it, or the step's valid actions ran out), else null.
 */
export type CallPlan = {
  readonly resultId: string;
  readonly replayPolicy: ReplayPolicy;
  readonly gate: 'approval' | 'answer' | null;
  readonly skip: string | null;
};

/**
 * Barrier before any call of a step with several runs: the whole decision, and each call's plan in
 * the provider's order. Holds the decision so a resume never re-interprets.
 */
export type ActionsIntentRecord = {
  readonly kind: 'intent';
  readonly v: string;
  readonly intent: 'actions';
  readonly stepIndex: number;
  /** `s{i}.actions`. */
  readonly resultId: string;
  readonly decision: ActionsDecision;
  readonly calls: readonly CallPlan[];
};

/** Any intent. */
export type IntentRecord = ModelCallIntentRecord | ActionIntentRecord | ActionsIntentRecord;

/** The outcome of one call of a step with several, written as it lands (not a barrier). */
export type CallResultRecord = {
  readonly kind: 'call_result';
  readonly v: string;
  readonly stepIndex: number;
  /** `s{i}.a{j}`, the call's. */
  readonly resultId: string;
  readonly outcome: ActionOutcome;
  /** A `completesRun` tool ran and returned normally. */
  readonly completedRun: boolean;
  /** The call ran a sub-agent: the child run's id, and the tokens its whole run used (absent otherwise). */
  readonly childRunId?: string;
  readonly usage?: Usage;
};

/** The model-call result, stored so an interrupted step is re-interpreted from what the model said. */
export type ResultRecord = {
  readonly kind: 'result';
  readonly v: string;
  readonly resultId: string;
  readonly stepIndex: number;
  readonly callSeq: number;
  readonly reply: {
    readonly callId: string | null;
    readonly text: string;
    readonly reasoning: string | null;
    readonly toolCalls: readonly ToolCallRequest[];
    readonly content: readonly ContentBlock[] | null;
    /** Absent from 1.0 records, like `usage` and `providerMetadata`: null then. */
    readonly finishReason?: FinishReason | null;
    readonly usage?: Usage | null;
    readonly providerMetadata?: JsonObject | null;
  };
};

/** The action result (if any) and the step record, written as one atomic write. */
export type StepWriteRecord = {
  readonly kind: 'step';
  readonly v: string;
  readonly step: StepRecord;
  readonly actionResult: { readonly resultId: string; readonly outcome: ActionOutcome } | null;
};

/** Last record of an ended run. */
export type RunEndedRecord = {
  readonly kind: 'run_ended';
  readonly v: string;
  readonly stopReason: EndReason;
  readonly finalAnswer: string | null;
  readonly steps: number;
  readonly validActions: number;
  readonly eventDeliveryFailures: number;
  /** Tokens of every model call before the end, summed. Absent from 1.0 records: zeros. */
  readonly usage?: Usage;
  /** Added in 1.2: the run ended `cancelled` because `requestStop` asked it to. */
  readonly stopRequest?: StopRequest;
  readonly endedAt: string;
};

/** Every record kind of a run log. */
export type LogRecord =
  | RunStartedRecord
  | IntentRecord
  | ResultRecord
  | StepWriteRecord
  | RunEndedRecord
  | InputRequestRecord
  | InputRecord
  | UpgradeRecord
  | CallResultRecord
  | ResumedRecord;

/** The kinds of record, as a runtime list. */
export const RECORD_KINDS = [
  'run_started',
  'intent',
  'result',
  'step',
  'run_ended',
  'input_request',
  'input',
  'upgrade',
  'call_result',
  'resumed',
] as const;
