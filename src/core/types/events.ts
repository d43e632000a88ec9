/**
 * The events a run delivers to its event sink, in order. Imports only its sibling type
 * modules (docs/design/README.md#dependency-rules, rule 2).
 * @module
 */
import type { Action, ActionOutcome } from './decisions.ts';
import type { InputReply, InputRequest } from './input.ts';
import type { EndReason, StepDecisionKind, StepRecord, StopRequest } from './records.ts';

/** One call of a `decision` event that holds several. */
export type DecisionCall = { readonly resultId: string; readonly action: Action };

type Ev<T extends string, F> = { readonly type: T; readonly runId: string } & F;

/** Events delivered to an {@link EventSink}, in order, each awaited. */
export type RunEvent =
  | Ev<'run_started', { readonly resumed: boolean; readonly fromStep: number }>
  | Ev<'step_started', { readonly stepIndex: number }>
  | Ev<
      'model_call_started',
      {
        readonly stepIndex: number;
        readonly callSeq: number;
        readonly resultId: string;
        readonly replayed: boolean;
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
