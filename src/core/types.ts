/**
 * Public value types of PolyLoop: messages, decisions, actions, outcomes, records and events.
 * This module imports nothing (SPEC §1 rule 2).
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

/** A native tool call made by the model (SPEC §8). Size metric: `name.length + JSON.stringify(arguments).length`. */
export type ToolCallBlock = {
  readonly type: 'tool_call';
  readonly id: string;
  readonly name: string;
  readonly arguments: JsonValue;
};

/** The answer to a native tool call, sent back to the model (SPEC §8). Size metric: `text.length`. */
export type ToolResultBlock = { readonly type: 'tool_result'; readonly toolCallId: string; readonly text: string };

/** Provider thinking that must be sent back verbatim (SPEC §8). Size metric: `text.length`. */
export type ReasoningBlock = { readonly type: 'reasoning'; readonly text: string; readonly signature?: string };

/** One block of message content. New branches are only ever added. */
export type ContentBlock = TextBlock | ToolCallBlock | ToolResultBlock | ReasoningBlock;

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

/** Run limits; every field is a positive integer. */
export type Budget = { readonly maxSteps: number; readonly maxValidActions: number; readonly maxContextChars: number };

/** The tool schema handed to a model (`ToolRegistry.modelSchemas()`). */
export type ModelToolSchema = { readonly name: string; readonly description: string; readonly parameters: JsonObject };

/** A tool's description without its implementation (what a registry exposes to interpreters). */
export type ToolDescriptor = ModelToolSchema & { readonly replayPolicy: ReplayPolicy; readonly completesRun: boolean };

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

/** A tool call as the model returned it (SPEC §8). */
export type ToolCallRequest = { readonly id: string; readonly name: string; readonly arguments: JsonValue };

/** What the model replied. `callId` is the provider's response id, never `''`. */
export type ModelReply = {
  readonly callId: string | null;
  readonly text: string;
  readonly reasoning: string | null;
  readonly toolCalls?: readonly ToolCallRequest[];
  readonly content?: readonly ContentBlock[];
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

/** What an executor reports about one action. */
export type ActionOutcome = {
  readonly status: ActionStatus;
  readonly observation: string;
  readonly observationIsSynthetic: boolean;
  readonly envReportedCompletion: boolean;
  readonly observationTruncatedChars: number;
};

/** Why a run ended, in the order the stop decision checks them (SPEC §4); `in_flight_unknown` last. */
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
  'context_limit',
  'in_flight_unknown',
] as const;

/** Why a run ended. */
export type StopReason = (typeof STOP_REASONS)[number];

/** What kind of step a step record describes. */
export type StepDecisionKind = 'action' | 'final' | 'invalid' | 'model_error' | 'interpreter_error';

/** One completed step of the trajectory (SPEC §5, §7, §8). Field names are fixed. */
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
  readonly actionStatus: ActionStatus | null;
  readonly envReportedCompletion: boolean;
  readonly observationTruncatedChars: number;
  readonly finalAnswer: string | null;
  readonly explanation: string | null;
  /** The provider's tool-call id of the action that ran (SPEC §8), or null. Added in 1.0; default null. */
  readonly toolCallId: string | null;
  /** A `completesRun` tool ran and its handler returned normally (stop reason `tool_completed`). Default false. */
  readonly toolCompletedRun: boolean;
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
  startedAt: '',
  endedAt: '',
} as const satisfies Omit<StepRecord, 'stepIndex' | 'callSeq' | 'decision'>);

/**
 * Record schema version. History:
 * - 1.0 — first version: run_started, intent, result, step, run_ended.
 */
export const RECORD_VERSION = '1.0';

/** The merged parameter snapshot a run's identity is made of. */
export type ParamSnapshot = JsonObject;

/** First record of every run. */
export type RunStartedRecord = {
  readonly kind: 'run_started';
  readonly v: string;
  readonly runId: string;
  readonly snapshot: ParamSnapshot;
  readonly snapshotHash: string;
  readonly startedAt: string;
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
  readonly stopReason: StopReason;
  readonly finalAnswer: string | null;
  readonly steps: number;
  readonly validActions: number;
  readonly eventDeliveryFailures: number;
  readonly endedAt: string;
};

/** Every record kind of a run log. */
export type LogRecord = RunStartedRecord | IntentRecord | ResultRecord | StepWriteRecord | RunEndedRecord;

/** The kinds of record, as a runtime list. */
export const RECORD_KINDS = ['run_started', 'intent', 'result', 'step', 'run_ended'] as const;

/** Where a log says its run is (SPEC §10). `awaiting_input` belongs to human input (SPEC §9). */
export type RunLogState = 'not_started' | 'at_boundary' | 'in_flight' | 'awaiting_input' | 'ended';

/**
 * How resume carries on an interrupted step (SPEC §5): call the model again with the same
 * resultId, interpret the stored reply, execute the recorded action again, or — for an
 * operation whose replay policy is `never` — have it settled (today the run ends
 * `in_flight_unknown`; SPEC §9 lets a person settle it).
 */
export type InFlightResolution = 'reissue_model' | 'reinterpret' | 'replay_action' | 'settle';

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
};

/** What one reading of a run log says (`readRunLog`, SPEC §10): the one answer every consumer uses. */
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
  /** The interrupted step when `state` is `in_flight`, else null. */
  readonly inFlight: InFlightStep | null;
  /** The open input request when `state` is `awaiting_input` (SPEC §9); null until human input lands. */
  readonly pending: null;
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
};

type Ev<T extends string, F> = { readonly type: T; readonly runId: string } & F;

/** Events delivered to an {@link EventSink}, in order, each awaited. */
export type RunEvent =
  | Ev<'run_started', { readonly resumed: boolean; readonly fromStep: number }>
  | Ev<'step_started', { readonly stepIndex: number }>
  | Ev<'model_call_started', { readonly stepIndex: number; readonly callSeq: number; readonly resultId: string; readonly replayed: boolean }>
  | Ev<'model_delta', { readonly stepIndex: number; readonly callSeq: number; readonly delta: string }>
  | Ev<'model_call_finished', { readonly stepIndex: number; readonly callSeq: number; readonly callId: string | null; readonly error: string | null }>
  | Ev<'decision', { readonly stepIndex: number; readonly decision: StepDecisionKind; readonly summary: string }>
  | Ev<'action_started', { readonly stepIndex: number; readonly resultId: string; readonly action: Action; readonly replayed: boolean }>
  | Ev<'action_finished', { readonly stepIndex: number; readonly resultId: string; readonly outcome: ActionOutcome }>
  | Ev<'step_finished', { readonly stepIndex: number; readonly step: StepRecord }>
  | Ev<'run_ended', { readonly stopReason: StopReason; readonly finalAnswer: string | null; readonly steps: number; readonly validActions: number }>
  | Ev<'warning', { readonly code: string; readonly message: string; readonly stepIndex?: number }>;

/** The `type` tags of {@link RunEvent}. */
export type RunEventType = RunEvent['type'];
