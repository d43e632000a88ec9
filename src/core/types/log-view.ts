/**
 * What one reading of a run log says (`readRunLog`) and what `run` and `resume` resolve with.
 * Imports only its sibling type modules (docs/design/README.md#dependency-rules, rule 2).
 * @module
 */
import type { InputRecord, InputRequest, InputRequestRecord } from './input.ts';
import type { Usage } from './messages.ts';
import type {
  ActionIntentRecord,
  ActionsIntentRecord,
  CallResultRecord,
  InFlightResolution,
  ResumedRecord,
  ModelCallIntentRecord,
  ResultRecord,
  RunEndedRecord,
  RunStartedRecord,
  StepRecord,
  StopRequest,
  StopReason,
  UpgradeRecord,
} from './records.ts';

/** Where a log says its run is (docs/design/records-and-recovery.md#log-states). */
export type RunLogState = 'not_started' | 'at_boundary' | 'in_flight' | 'awaiting_input' | 'ended';

/** One call of an interrupted step with several: what its records say so far. */
export type CallInFlight = {
  /** The call's gate request (`s{i}.a{j}.input`) and its reply, once each landed. */
  readonly gate: InputRequestRecord | null;
  readonly gateReply: InputRecord | null;
  /** The call's latest settle request (`s{i}.a{j}.settle`) and its reply, once each landed. */
  readonly settle: InputRequestRecord | null;
  readonly settleReply: InputRecord | null;
  /** The call's outcome, once it landed. */
  readonly result: CallResultRecord | null;
  /**
   * The call ran a sub-agent that waits for a person: the latest of its requests (`s{i}.a{j}.c{n}`)
   * and its reply, once each landed (docs/design/sub-agents.md).
   */
  readonly child: InputRequestRecord | null;
  readonly childReply: InputRecord | null;
};

/** The records of an interrupted step with several calls: its `actions` intent and each call's. */
export type CallsInFlight = {
  readonly intent: ActionsIntentRecord;
  /** In the provider's order, one per `intent.calls`. */
  readonly calls: readonly CallInFlight[];
  /**
   * Every gate was answered when the log was read: a call without its outcome may have run (and is
   * run again if `safe`, else settled). False while a gate is open: nothing of the step ran.
   */
  readonly mayHaveRun: boolean;
};

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
  /** A step with several calls: its `actions` intent and each call's records; null for any other step. */
  readonly calls: CallsInFlight | null;
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
  /** The open input request when `state` is `awaiting_input`, else null: the first of `openRequests`. */
  readonly pending: InputRequest | null;
  /** Every open input request, in call order (several only in a step with several calls). */
  readonly openRequests: readonly InputRequest[];
  /** The run's `upgrade` records, in order (empty for a run never upgraded). */
  readonly upgrades: readonly UpgradeRecord[];
  /**
   * Where a later driver took the run over, in order: its `resumed` records (empty for a run one
   * driver carried from start to end, and for logs written before 1.2). The steps from each
   * record's `stepIndex` on were carried out by that driver, until the next.
   */
  readonly resumes: readonly ResumedRecord[];
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
  /**
   * One record per step, in order — under a `historyWindow` of N steps only the last N (the run
   * keeps no more in memory; its log keeps every step). `steps`, `validActions` and `usage` count
   * the whole run either way.
   */
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
  /** Present when the run ended `cancelled` because `requestStop` asked it to: the reason given, if any. */
  readonly stopRequest?: StopRequest;
};
