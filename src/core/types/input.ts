/**
 * Human input's values and records (docs/human-input.md): what a run asks a person, the replies it
 * accepts, and the two records of the exchange. Imports only its sibling type modules
 * (docs/design/README.md#dependency-rules, rule 2).
 * @module
 */
import type { ActionDecision } from './decisions.ts';
import type { JsonObject } from './messages.ts';

/**
 * What a person is asked (docs/human-input.md#the-flow); `child`: a sub-agent's run asks, and the
 * request it holds says what (docs/design/sub-agents.md).
 */
export type InputRequestKind = 'approval' | 'answer' | 'settle' | 'child';

/**
 * A person's reply to an open input request, naming it by `resultId`. Which kinds a request
 * accepts: approval — approve, deny, cancel; answer — answer, deny, cancel; settle of an action
 * — executed, retry, deny, cancel; settle of a model call — retry, cancel.
 */
export type InputReply =
  | {
      readonly kind: 'approve';
      readonly resultId: string;
      /**
       * Approve with these arguments instead of the proposed ones (a tool call of the run's own
       * tools only): checked against the tool's schema, stored with the reply, and what runs; the
       * history keeps what the model proposed (docs/human-input.md#edit-on-approval).
       */
      readonly arguments?: JsonObject;
    }
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
  /** Kind `child` only: the sub-agent's run, and its own open request (which may be a `child` one again). */
  readonly child?: ChildRequest;
};

/** What a sub-agent's run asks: its run id and its open request; the reply is carried to it. */
export type ChildRequest = {
  readonly runId: string;
  readonly request: InputRequest;
  /**
   * How many earlier requests of the child bore the same resultId (a settlement is asked again
   * after a retry that crashed); absent when none. A reply reaches the child only while this very
   * request is open, never a later one that happens to share its id.
   */
  readonly repeat?: number;
};

/**
 * Barrier: the run asks a person and waits. `resultId` is `s{i}.input` (approval, answer), `s{i}.settle`
 * or `s{i}.c{n}` (the n-th pause of a sub-agent in the step); in a step with several calls, the call's:
 * `s{i}.a{j}.input`, `s{i}.a{j}.settle`, `s{i}.a{j}.c{n}`.
 */
export type InputRequestRecord = {
  readonly kind: 'input_request';
  readonly v: string;
  readonly stepIndex: number;
  readonly resultId: string;
  readonly request: {
    readonly kind: InputRequestKind;
    readonly target: 'action' | 'model_call';
    readonly decision: ActionDecision | null;
    readonly child?: ChildRequest;
  };
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
