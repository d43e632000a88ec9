/**
 * The events a run delivers to its event sink, in order. Imports only its sibling type
 * modules (docs/design/README.md#dependency-rules, rule 2).
 * @module
 */
import type { Action, ActionOutcome, ReplayPolicy } from './decisions.ts';
import type { FinishReason, Message, Usage } from './messages.ts';
import type { InputReply, InputRequest } from './input.ts';
import type { EndReason, InFlightResolution, StepDecisionKind, StepRecord, StopRequest } from './records.ts';

/** One call of a `decision` event that holds several. */
export type DecisionCall = { readonly resultId: string; readonly action: Action };

type Ev<T extends string, F> = { readonly type: T; readonly runId: string } & F;

/** Events delivered to an {@link EventSink}, in order, each awaited. */
export type RunEvent =
  | Ev<
      'run_started',
      {
        readonly resumed: boolean;
        readonly fromStep: number;
        /** A resumed run: how its interrupted step goes on (`readRunLog`'s resolution), null at a boundary. */
        readonly resolution?: InFlightResolution | null;
        /** A resumed run whose first driver's sink opened a span: that span's W3C trace context, from the log. */
        readonly traceparent?: string;
      }
    >
  | Ev<'step_started', { readonly stepIndex: number }>
  | Ev<
      'model_call_started',
      {
        readonly stepIndex: number;
        readonly callSeq: number;
        readonly resultId: string;
        readonly replayed: boolean;
        /** The model call's replay policy (the request's `modelReplayPolicy`). */
        readonly replayPolicy: ReplayPolicy;
        /** The model's id, when its caller reports one (`params.model`, as every PolyLoop adapter does). */
        readonly model?: string;
        /**
         * The messages the call is given (a frozen copy): only for a sink that asks for them with
         * `withMessages` (a tracing sink that captures content); absent for the others, who pay nothing.
         */
        readonly messages?: readonly Message[];
      }
    >
  /** A streamed delta of the reply's text, or of its reasoning (`kind: 'reasoning'`; absent for text). */
  | Ev<
      'model_delta',
      {
        readonly stepIndex: number;
        readonly callSeq: number;
        readonly delta: string;
        readonly kind?: 'reasoning';
      }
    >
  | Ev<
      'model_call_finished',
      {
        readonly stepIndex: number;
        readonly callSeq: number;
        readonly callId: string | null;
        readonly error: string | null;
        /** Tokens the call used, when the model reported them. */
        readonly usage?: Usage;
        /** Why the model stopped, when it said. */
        readonly finishReason?: FinishReason;
      }
    >
  | Ev<
      'decision',
      {
        readonly stepIndex: number;
        readonly decision: StepDecisionKind;
        readonly summary: string;
        /**
         * A reply with several calls (docs/design/step.md#several-calls-a-step): each call's resultId
         * (`s{i}.a{j}`) and action, in the provider's order — a UI shows them all before any runs or
         * asks. Absent for every other decision.
         */
        readonly calls?: readonly DecisionCall[];
      }
    >
  | Ev<
      'action_started',
      {
        readonly stepIndex: number;
        readonly resultId: string;
        readonly action: Action;
        readonly replayed: boolean;
        /** The action's replay policy, as its intent records it. */
        readonly replayPolicy: ReplayPolicy;
        /** The action runs a sub-agent: its run's id (absent for every other action). */
        readonly childRunId?: string;
      }
    >
  | Ev<
      'action_finished',
      {
        readonly stepIndex: number;
        readonly resultId: string;
        readonly outcome: ActionOutcome;
        readonly childRunId?: string;
      }
    >
  | Ev<'step_finished', { readonly stepIndex: number; readonly step: StepRecord }>
  | Ev<'input_requested', { readonly stepIndex: number; readonly resultId: string; readonly request: InputRequest }>
  | Ev<'input_received', { readonly stepIndex: number; readonly resultId: string; readonly kind: InputReply['kind'] }>
  | Ev<
      'run_ended',
      {
        readonly stopReason: EndReason;
        readonly finalAnswer: string | null;
        readonly steps: number;
        readonly validActions: number;
        /** Present when `requestStop` ended the run. */
        readonly stopRequest?: StopRequest;
      }
    >
  | Ev<'warning', { readonly code: string; readonly message: string; readonly stepIndex?: number }>;

/** The `type` tags of {@link RunEvent}. */
export type RunEventType = RunEvent['type'];
