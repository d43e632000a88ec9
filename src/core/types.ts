/**
 * Public value types of PolyLoop: messages, decisions, actions, outcomes, records and events.
 * This module imports nothing (docs/design/README.md#dependency-rules, rule 2).
 * @module
 */

/** A JSON value as it travels through records and tool arguments. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** A JSON object (tool arguments, JSON Schemas, parameter snapshots). */
export type JsonObject = { readonly [key: string]: JsonValue };

/** Who speaks a message. */
export type Role = 'system' | 'user' | 'assistant';

/** Plain text. Size metric: `text.length`. */
export type TextBlock = { readonly type: 'text'; readonly text: string };

/**
 * A native tool call made by the model (docs/design/conversation.md#native-tool-calls).
 * Size metric: `name.length + JSON.stringify(arguments).length`.
 */
export type ToolCallBlock = {
  readonly type: 'tool_call';
  readonly id: string;
  readonly name: string;
  readonly arguments: JsonValue;
};

/** The answer to a native tool call, sent back to the model. Size metric: `text.length`. */
export type ToolResultBlock = { readonly type: 'tool_result'; readonly toolCallId: string; readonly text: string };

/** Provider thinking that must be sent back verbatim. Size metric: `text.length`. */
export type ReasoningBlock = { readonly type: 'reasoning'; readonly text: string; readonly signature?: string };

/**
 * Provider state that must go back to the provider verbatim, e.g. Anthropic's redacted thinking
 * (docs/design/conversation.md#reply-metadata-and-token-budgets). Size metric: the JSON length of `data`.
 */
export type OpaqueBlock = { readonly type: 'opaque'; readonly provider: string; readonly data: JsonValue };

/** One block of message content. New branches are only ever added. */
export type ContentBlock = TextBlock | ToolCallBlock | ToolResultBlock | ReasoningBlock | OpaqueBlock;

/** A message of the assembled context. Content is always a sequence of blocks. */
export type Message = { readonly role: Role; readonly content: readonly ContentBlock[] };

/** A seam's reported parameters: flat, JSON-scalar values only. */
export type SeamParams = Readonly<Record<string, string | number | boolean | null>>;

/** May an in-flight operation be issued again on resume? */
export type ReplayPolicy = 'safe' | 'never';

/** How the tool list is rendered into the prompt. */
export type ToolRenderStyle = 'none' | 'json' | 'markdown';

/** A skill entry injected into a channel. */
export type SkillEntry = { readonly name: string; readonly text: string };

/** Run limits; every field is a positive integer. `maxTotalTokens` is optional: absent means no limit. */
export type Budget = { readonly maxSteps: number; readonly maxValidActions: number; readonly maxContextChars: number; readonly maxTotalTokens?: number };

/** The tool schema handed to a model (`ToolRegistry.modelSchemas()`). */
export type ModelToolSchema = { readonly name: string; readonly description: string; readonly parameters: JsonObject };

/** A tool's description without its implementation (what a registry exposes to interpreters). */
export type ToolDescriptor = ModelToolSchema & {
  readonly replayPolicy: ReplayPolicy;
  readonly completesRun: boolean;
  /** A person approves each call before it runs. Default false. */
  readonly needsApproval: boolean;
  /** `'human'`: a person answers the call instead of a handler; null otherwise. */
  readonly answeredBy: 'human' | null;
};

/** Result of validating an action against a registry. */
export type ValidationResult = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** What an action is: a call of a named tool, or source code for an environment to run. */
export type Action =
  | { readonly kind: 'tool_call'; readonly name: string; readonly arguments: JsonValue; readonly id?: string }
  | { readonly kind: 'code'; readonly source: string };

/** The read-only view of a tool registry that interpreters receive. `ToolRegistry` implements it. */
export interface ToolCatalog {
  names(): readonly string[];
  get(name: string): ToolDescriptor | undefined;
  validate(action: Action): ValidationResult;
  modelSchemas(): readonly ModelToolSchema[];
}

/** A tool call as the model returned it. */
export type ToolCallRequest = { readonly id: string; readonly name: string; readonly arguments: JsonValue };

/** Why the model stopped: `length` means the reply was cut off at the token limit. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | 'other';

/** The finish reasons, as a runtime list. */
export const FINISH_REASONS = ['stop', 'length', 'tool_calls', 'content_filter', 'error', 'other'] as const satisfies readonly FinishReason[];

/** Tokens one model call used, or a run used in total (summed over calls). */
export type Usage = {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens?: number;
  readonly reasoningTokens?: number;
};

/** What the model replied. `callId` is the provider's response id, never `''`. */
export type ModelReply = {
  readonly callId: string | null;
  readonly text: string;
  readonly reasoning: string | null;
  readonly toolCalls?: readonly ToolCallRequest[];
  readonly content?: readonly ContentBlock[];
  /** Why the model stopped. */
  readonly finishReason?: FinishReason;
  /** Tokens this call used; a reply without it counts 0 toward `maxTotalTokens`. */
  readonly usage?: Usage;
  /** Provider data kept with the result record. */
  readonly providerMetadata?: JsonObject;
};

type DecisionHistory = { readonly historyText: string; readonly historyContent?: readonly ContentBlock[] };

/** An interpreter's reading of a reply: one action, a final answer, or an invalid reply. */
export type Decision =
  | ({ readonly kind: 'action'; readonly action: Action; readonly trajectoryRepr: string } & DecisionHistory)
  | ({ readonly kind: 'final'; readonly answer: string } & DecisionHistory)
  | ({ readonly kind: 'invalid'; readonly explanation: string } & DecisionHistory);

/** The action branch of {@link Decision}. */
export type ActionDecision = Extract<Decision, { kind: 'action' }>;

/** How an action went. */
export type ActionStatus = 'executed' | 'not_executed' | 'env_error';

/** A step's action status: an executor's, or `denied` (a person refused the action; nothing ran). */
export type StepActionStatus = ActionStatus | 'denied';

/** What an executor reports about one action. */
export type ActionOutcome = {
  readonly status: ActionStatus;
  readonly observation: string;
  readonly observationIsSynthetic: boolean;
  readonly envReportedCompletion: boolean;
  readonly observationTruncatedChars: number;
};

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
};

/** The step record's fields in their canonical order: live and decoded records list keys in this order. */
export const STEP_FIELDS = [
  'stepIndex',
  'callSeq',
  'modelCallId',
  'modelText',
  'reasoning',
  'decision',
  'actionRepr',
  'historyText',
  'historyContent',
  'observation',
  'observationIsSynthetic',
  'actionStatus',
  'envReportedCompletion',
  'observationTruncatedChars',
  'finalAnswer',
  'explanation',
  'toolCallId',
  'toolCompletedRun',
  'usage',
  'finishReason',
  'startedAt',
  'endedAt',
] as const satisfies readonly (keyof StepRecord)[];

/**
 * Defaults of the step record's optional fields: what a decoder fills in for a field an older
 * writer did not write, and what a step starts from before its facts are known.
 */
export const STEP_DEFAULTS = Object.freeze({
  modelCallId: null,
  modelText: null,
  reasoning: null,
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
} as const satisfies Omit<StepRecord, 'stepIndex' | 'callSeq' | 'decision'>);

/**
 * Record schema version. History:
 * - 1.0 — first version: run_started, intent, result, step, run_ended.
 * - 1.1 — human input: input_request and input records; step `actionStatus: 'denied'`.
 *   Reply metadata: result `reply.finishReason/usage/providerMetadata`, step `usage`
 *   and `finishReason`, run_ended `usage` (all defaulted when absent); the `opaque` block.
 *   1.0 logs still decode and resume (a 1.0 run that ended `in_flight_unknown` stays ended).
 * - 1.2 — runs that outlive their code: `run_started.request` (what `resume(agent, runId)` needs
 *   beyond the snapshot) and the `upgrade` record. Every other record is shaped as in 1.1.
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
  readonly startedAt: string;
};

/** One changed top-level key of the identity snapshot: hashes of its canonical JSON, and the new value (absent: the key is gone). */
export type UpgradeChange = { readonly before: string | null; readonly after: string | null; readonly value?: JsonValue };

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

/** Either intent. */
export type IntentRecord = ModelCallIntentRecord | ActionIntentRecord;

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
  readonly endedAt: string;
};

/** Every record kind of a run log. */
export type LogRecord = RunStartedRecord | IntentRecord | ResultRecord | StepWriteRecord | RunEndedRecord | InputRequestRecord | InputRecord | UpgradeRecord;

/** The kinds of record, as a runtime list. */
export const RECORD_KINDS = ['run_started', 'intent', 'result', 'step', 'run_ended', 'input_request', 'input', 'upgrade'] as const;

/** What a person is asked (docs/human-input.md#the-flow). */
export type InputRequestKind = 'approval' | 'answer' | 'settle';

/**
 * A person's reply to an open input request, naming it by `resultId`. Which kinds a request
 * accepts: approval — approve, deny, cancel; answer — answer, deny, cancel; settle of an action
 * — executed, retry, deny, cancel; settle of a model call — retry, cancel.
 */
export type InputReply =
  | { readonly kind: 'approve'; readonly resultId: string }
  | { readonly kind: 'deny'; readonly resultId: string; readonly reason: string }
  | { readonly kind: 'answer'; readonly resultId: string; readonly text: string }
  | { readonly kind: 'executed'; readonly resultId: string; readonly observation: string }
  | { readonly kind: 'retry'; readonly resultId: string }
  | { readonly kind: 'cancel'; readonly resultId: string };

/** The kinds of {@link InputReply}, as a runtime list. */
export const INPUT_REPLY_KINDS = ['approve', 'deny', 'answer', 'executed', 'retry', 'cancel'] as const;

/** An open request for human input: what `RunResult.pending` and `RunLogView.pending` hold. */
export type InputRequest = {
  readonly resultId: string;
  readonly stepIndex: number;
  readonly kind: InputRequestKind;
  /** What the request is about: the recorded action, or (settle only) the model call. */
  readonly target: 'action' | 'model_call';
  /** The action to approve, answer or settle, exactly as recorded; null for a model call. */
  readonly decision: ActionDecision | null;
};

/** Barrier: the run asks a person and waits. `resultId` is `s{i}.input` (approval, answer) or `s{i}.settle`. */
export type InputRequestRecord = {
  readonly kind: 'input_request';
  readonly v: string;
  readonly stepIndex: number;
  readonly resultId: string;
  readonly request: { readonly kind: InputRequestKind; readonly target: 'action' | 'model_call'; readonly decision: ActionDecision | null };
  readonly requestedAt: string;
};

/** Barrier: a person's reply, written before it is carried out. */
export type InputRecord = {
  readonly kind: 'input';
  readonly v: string;
  readonly stepIndex: number;
  readonly resultId: string;
  readonly reply: InputReply;
  readonly receivedAt: string;
};

/** Where a log says its run is (docs/design/records-and-recovery.md#log-states). */
export type RunLogState = 'not_started' | 'at_boundary' | 'in_flight' | 'awaiting_input' | 'ended';

/**
 * How resume carries on an interrupted step (docs/design/records-and-recovery.md#the-interrupted-step): call
 * the model again with the same resultId (`reissue_model`), interpret the stored reply (`reinterpret`),
 * execute the recorded action again (`replay_action`), ask a person to settle an operation whose replay
 * policy is `never` (`settle`), wait for the reply to an open request (`await_input`), or carry out a reply
 * that landed (`apply_input`).
 */
export type InFlightResolution = 'reissue_model' | 'reinterpret' | 'replay_action' | 'settle' | 'await_input' | 'apply_input';

/** The interrupted step of an in-flight log, its resolution already decided. */
export type InFlightStep = {
  readonly stepIndex: number;
  readonly resolution: InFlightResolution;
  /** The operation the last intent announced: the model call, or the action. */
  readonly target: 'model_call' | 'action';
  readonly modelIntent: ModelCallIntentRecord;
  /** The model-call result, once it landed. */
  readonly result: ResultRecord | null;
  /** The action intent (with the recorded decision), once it landed. */
  readonly actionIntent: ActionIntentRecord | null;
  /** The input request the step awaits (`await_input`) or whose reply it carries out (`apply_input`). */
  readonly request: InputRequestRecord | null;
  /** The reply to carry out (`apply_input`), else null. */
  readonly input: InputRecord | null;
  /** The reply that approved (or denied, or answered) this step's action, once it landed. */
  readonly approval: InputRecord | null;
};

/** What one reading of a run log says (docs/design/run-log.md#one-reader): the one answer every consumer uses. */
export type RunLogView = {
  readonly state: RunLogState;
  /** From `run_started`; null for an empty log. */
  readonly runId: string | null;
  readonly started: RunStartedRecord | null;
  /** Completed steps, in order. */
  readonly trajectory: readonly StepRecord[];
  /** Steps with a step record (invalid ones included). */
  readonly steps: number;
  /** Steps whose action was `executed`. */
  readonly validActions: number;
  /** Tokens of the completed steps' model calls, summed. */
  readonly usage: Usage;
  /** The interrupted step when `state` is `in_flight` or `awaiting_input` (resolution `await_input`), else null. */
  readonly inFlight: InFlightStep | null;
  /** The open input request when `state` is `awaiting_input`, else null. */
  readonly pending: InputRequest | null;
  /** The run's `upgrade` records, in order (empty for a run never upgraded). */
  readonly upgrades: readonly UpgradeRecord[];
  readonly ended: RunEndedRecord | null;
};

/** What `run` and `resume` resolve with. */
export type RunResult = {
  readonly runId: string;
  readonly stopReason: StopReason;
  readonly finalAnswer: string | null;
  readonly steps: number;
  readonly validActions: number;
  readonly eventDeliveryFailures: number;
  readonly trajectory: readonly StepRecord[];
  /** The open input request, exactly when `stopReason` is `awaiting_input`; null otherwise. */
  readonly pending: InputRequest | null;
  /** Tokens of every model call of the run, summed over calls. */
  readonly usage: Usage;
  /**
   * Why the run failed, for `model_error`, `interpreter_error` and `env_error`: the failure text
   * of the step that ended it (`"ModelCallError: openai: … (status 401 …)"`, its observation).
   * Null for every other stop reason. Derived from the trajectory, so not a field of any record.
   */
  readonly error: string | null;
};

type Ev<T extends string, F> = { readonly type: T; readonly runId: string } & F;

/** Events delivered to an {@link EventSink}, in order, each awaited. */
export type RunEvent =
  | Ev<'run_started', { readonly resumed: boolean; readonly fromStep: number }>
  | Ev<'step_started', { readonly stepIndex: number }>
  | Ev<'model_call_started', { readonly stepIndex: number; readonly callSeq: number; readonly resultId: string; readonly replayed: boolean }>
  /** A streamed delta of the reply's text, or of its reasoning (`kind: 'reasoning'`; absent for text). */
  | Ev<'model_delta', {
      readonly stepIndex: number;
      readonly callSeq: number;
      readonly delta: string;
      readonly kind?: 'reasoning';
    }>
  | Ev<'model_call_finished', { readonly stepIndex: number; readonly callSeq: number; readonly callId: string | null; readonly error: string | null }>
  | Ev<'decision', { readonly stepIndex: number; readonly decision: StepDecisionKind; readonly summary: string }>
  | Ev<'action_started', { readonly stepIndex: number; readonly resultId: string; readonly action: Action; readonly replayed: boolean }>
  | Ev<'action_finished', { readonly stepIndex: number; readonly resultId: string; readonly outcome: ActionOutcome }>
  | Ev<'step_finished', { readonly stepIndex: number; readonly step: StepRecord }>
  | Ev<'input_requested', { readonly stepIndex: number; readonly resultId: string; readonly request: InputRequest }>
  | Ev<'input_received', { readonly stepIndex: number; readonly resultId: string; readonly kind: InputReply['kind'] }>
  | Ev<'run_ended', { readonly stopReason: EndReason; readonly finalAnswer: string | null; readonly steps: number; readonly validActions: number }>
  | Ev<'warning', { readonly code: string; readonly message: string; readonly stepIndex?: number }>;

/** The `type` tags of {@link RunEvent}. */
export type RunEventType = RunEvent['type'];
