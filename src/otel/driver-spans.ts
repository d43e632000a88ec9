/**
 * The spans of one driver session of one run: its `invoke_agent` span, the `chat` span of the model
 * call in flight, the `execute_tool` span of each action running (docs/decisions/0079-otel-sink.md).
 * Every span is given its start and end time from the session's clock (clock.ts): a chat span that
 * waits for its step's reply ends later than its call did.
 * @module
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Context, HrTime, Link, Span, SpanContext, Tracer } from '@opentelemetry/api';
import type { Action, EndReason, RunEvent, SettledRun } from '../core/index.ts';
import * as A from './attributes.ts';
import { driverClock } from './clock.ts';
import { argumentsJson, inputMessagesJson, outputMessagesJson } from './content.ts';
import { startSpan } from './guarded-span.ts';

type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

/** What a driver session is opened with. */
export type DriverStart = {
  readonly tracer: Tracer;
  readonly captureContent: boolean;
  readonly runId: string;
  /** The context its `invoke_agent` span is a child of. */
  readonly parent: Context;
  /** The first driver's span, which a later driver's span links to; null for the first. */
  readonly first: SpanContext | null;
  /** Where a sub-agent's run finds the `execute_tool` span it nests under, by the child's run id. */
  readonly children: Map<string, Context>;
};

/** Stop reasons that mean the run failed: its `invoke_agent` span ends with status ERROR. */
const FAILED: ReadonlySet<EndReason> = new Set(['model_error', 'interpreter_error', 'env_error', 'in_flight_unknown']);

/** A chat span whose call finished, held open until its step records the reply (content capture only). */
type Held = { readonly span: Span; readonly at: HrTime };

export class DriverSpans {
  readonly runId: string;
  readonly agent: Span;
  /** The context the run's model calls and actions are children of. */
  readonly context: Context;
  /** run_started has been delivered (a fresh run's span opens in the `traceparent` hook, just before). */
  started = false;
  readonly #start: DriverStart;
  readonly #now = driverClock();
  #chat: Span | null = null;
  readonly #held = new Map<number, Held>();
  readonly #tools = new Map<string, { readonly span: Span; readonly childRunId?: string }>();
  #inputTokens = 0;
  #outputTokens = 0;
  #usage = false;
  #ended = false;

  constructor(start: DriverStart) {
    this.#start = start;
    this.runId = start.runId;
    const links: Link[] = start.first === null ? [] : [{ context: start.first }];
    const attributes: Attributes = { [A.OPERATION]: 'invoke_agent', [A.CONVERSATION_ID]: start.runId };
    const options = { kind: SpanKind.INTERNAL, attributes, links, startTime: this.#now() };
    this.agent = startSpan(start.tracer, 'invoke_agent', options, start.parent);
    this.context = trace.setSpan(start.parent, this.agent);
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** `run_started`: where this driver takes the run on. */
  onStarted(e: EventOf<'run_started'>): void {
    this.started = true;
    const resolution = e.resolution == null ? {} : { [A.RUN_RESOLUTION]: e.resolution };
    this.agent.setAttributes({ [A.RUN_RESUMED]: e.resumed, [A.RUN_FROM_STEP]: e.fromStep, ...resolution });
  }

  onModelStarted(e: EventOf<'model_call_started'>): void {
    if (this.#ended) return;
    this.#closeHeld(e.stepIndex);
    const model = e.model === undefined ? {} : { [A.REQUEST_MODEL]: e.model };
    const input = this.#start.captureContent && e.messages ? { [A.INPUT_MESSAGES]: inputMessagesJson(e.messages) } : {};
    const attributes: Attributes = {
      [A.OPERATION]: 'chat',
      [A.CONVERSATION_ID]: this.runId,
      ...model,
      [A.STEP_INDEX]: e.stepIndex,
      [A.REPLAY_POLICY]: e.replayPolicy,
      [A.REPLAYED]: e.replayed,
      ...input,
    };
    const name = e.model === undefined ? 'chat' : `chat ${e.model}`;
    const options = { kind: SpanKind.CLIENT, attributes, startTime: this.#now() };
    this.#chat = startSpan(this.#start.tracer, name, options, this.context);
  }

  onModelFinished(e: EventOf<'model_call_finished'>): void {
    const span = this.#chat;
    if (span === null) return;
    this.#chat = null;
    const at = this.#now();
    if (e.callId !== null) span.setAttribute(A.RESPONSE_ID, e.callId);
    if (e.usage) {
      this.#usage = true;
      this.#inputTokens += e.usage.inputTokens;
      this.#outputTokens += e.usage.outputTokens;
      span.setAttributes({ [A.INPUT_TOKENS]: e.usage.inputTokens, [A.OUTPUT_TOKENS]: e.usage.outputTokens });
      if (e.usage.cachedInputTokens !== undefined) span.setAttribute(A.CACHE_READ_TOKENS, e.usage.cachedInputTokens);
      if (e.usage.reasoningTokens !== undefined) span.setAttribute(A.REASONING_TOKENS, e.usage.reasoningTokens);
    }
    if (e.finishReason !== undefined) span.setAttribute(A.RESPONSE_FINISH_REASONS, [e.finishReason]);
    if (e.error !== null) {
      span.setAttribute(A.ERROR_TYPE, errorType(e.error));
      // A provider's error often quotes the prompt or the reply: its message is content.
      span.setStatus({ code: SpanStatusCode.ERROR, ...this.#message(e.error) });
      span.end(at);
    } else if (this.#start.captureContent) this.#held.set(e.stepIndex, { span, at });
    else span.end(at);
  }

  onActionStarted(e: EventOf<'action_started'>): void {
    const name = toolName(e.action);
    const child = e.childRunId === undefined ? {} : { [A.CHILD_RUN_ID]: e.childRunId };
    const args = this.#start.captureContent ? { [A.TOOL_ARGUMENTS]: argumentsJson(e.action) } : {};
    const attributes: Attributes = {
      [A.OPERATION]: 'execute_tool',
      [A.CONVERSATION_ID]: this.runId,
      [A.TOOL_NAME]: name,
      [A.TOOL_CALL_ID]: e.action.kind === 'tool_call' ? (e.action.id ?? e.resultId) : e.resultId,
      [A.STEP_INDEX]: e.stepIndex,
      [A.REPLAY_POLICY]: e.replayPolicy,
      [A.REPLAYED]: e.replayed,
      ...child,
      ...args,
    };
    const options = { kind: SpanKind.INTERNAL, attributes, startTime: this.#now() };
    const span = startSpan(this.#start.tracer, `execute_tool ${name}`, options, this.context);
    this.#closeTool(e.resultId, { [A.INTERRUPTED]: true });
    this.#tools.set(e.resultId, e.childRunId === undefined ? { span } : { span, childRunId: e.childRunId });
    if (e.childRunId !== undefined) this.#start.children.set(e.childRunId, trace.setSpan(this.context, span));
  }

  onActionFinished(e: EventOf<'action_finished'>): void {
    const tool = this.#tools.get(e.resultId);
    if (!tool) return;
    const { status, observation } = e.outcome;
    const result = this.#start.captureContent ? { [A.TOOL_RESULT]: observation } : {};
    tool.span.setAttributes({ [A.ACTION_STATUS]: status, ...result });
    if (status === 'env_error') {
      tool.span.setAttribute(A.ERROR_TYPE, 'env_error');
      tool.span.setStatus({ code: SpanStatusCode.ERROR, ...this.#message(observation) });
    }
    this.#closeTool(e.resultId, {});
  }

  /** `step_finished`: a chat span held for its reply records it and ends. */
  onStepFinished(e: EventOf<'step_finished'>): void {
    const held = this.#held.get(e.stepIndex);
    if (!held) return;
    const output = outputMessagesJson(e.step);
    if (output !== null) held.span.setAttribute(A.OUTPUT_MESSAGES, output);
    this.#closeHeld(e.stepIndex);
  }

  /** `input_requested` of a sub-agent: the action that ran it is over (its child waits for a person). */
  onInputRequested(e: EventOf<'input_requested'>): void {
    const child = e.request.kind === 'child' ? e.request.child : undefined;
    if (!child) return;
    for (const [resultId, tool] of this.#tools)
      if (tool.childRunId === child.runId) this.#closeTool(resultId, { [A.PENDING_INPUT]: child.request.kind });
  }

  /** `run_ended`: every span of the session ends, the run's with its stop reason. */
  onEnded(e: EventOf<'run_ended'>): void {
    if (this.#ended) return;
    this.agent.setAttributes({ [A.RUN_STOP_REASON]: e.stopReason, [A.RUN_STEPS]: e.steps });
    if (FAILED.has(e.stopReason)) {
      this.agent.setAttribute(A.ERROR_TYPE, e.stopReason);
      this.agent.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.#close({ [A.INTERRUPTED]: true });
  }

  /**
   * The driver's `run` or `resume` settled (the sink's `settled` hook, after its last event): a run
   * left waiting for a person ends its span with the request's kind; a driver that rejected (a store
   * failure, a lost lease) ends it with status ERROR. A run that ended has ended its span already.
   */
  onSettled(outcome: SettledRun): void {
    if (this.#ended) return;
    if ('error' in outcome) {
      this.agent.setAttribute(A.ERROR_TYPE, errorClass(outcome.error));
      // A store's failure may quote the record it could not write: its message is content too.
      const message = this.#start.captureContent ? { message: describe(outcome.error) } : {};
      this.agent.setStatus({ code: SpanStatusCode.ERROR, ...message });
    } else if (outcome.result.pending) this.agent.setAttribute(A.RUN_PENDING_INPUT, outcome.result.pending.kind);
    this.#close({ [A.INTERRUPTED]: true });
  }

  /** A later driver took the run over while this one was still open (it was never told it settled). */
  interrupt(): void {
    if (this.#ended) return;
    this.agent.setAttribute(A.INTERRUPTED, true);
    this.#close({ [A.INTERRUPTED]: true });
  }

  /** A status message from what a seam said: only when content is captured (`error.type` is always set). */
  #message(text: string): { message?: string } {
    return this.#start.captureContent ? { message: text } : {};
  }

  /** End every span still open (those that did not finish get `leftOpen`), then the run's. */
  #close(leftOpen: Attributes): void {
    for (const step of [...this.#held.keys()]) this.#closeHeld(step);
    this.#closeChat(leftOpen);
    for (const resultId of [...this.#tools.keys()]) this.#closeTool(resultId, leftOpen);
    if (this.#usage)
      this.agent.setAttributes({ [A.INPUT_TOKENS]: this.#inputTokens, [A.OUTPUT_TOKENS]: this.#outputTokens });
    this.#ended = true;
    this.agent.end(this.#now());
  }

  /** End the chat span of a call whose end was never announced (`leftOpen` says why). */
  #closeChat(leftOpen: Attributes): void {
    if (this.#chat === null) return;
    this.#chat.setAttributes(leftOpen);
    this.#chat.end(this.#now());
    this.#chat = null;
  }

  #closeHeld(stepIndex: number): void {
    const held = this.#held.get(stepIndex);
    if (!held) return;
    this.#held.delete(stepIndex);
    held.span.end(held.at);
  }

  #closeTool(resultId: string, attributes: Attributes): void {
    const tool = this.#tools.get(resultId);
    if (!tool) return;
    this.#tools.delete(resultId);
    if (tool.childRunId !== undefined) this.#start.children.delete(tool.childRunId);
    tool.span.setAttributes(attributes);
    tool.span.end(this.#now());
  }
}

/** `gen_ai.tool.name`: the tool's; a code action runs the interpreter's `code` tool. */
function toolName(action: Action): string {
  return action.kind === 'tool_call' ? action.name : 'code';
}

/** `error.type` of a failed model call: the error's class, from the `Name: message` the event carries. */
function errorType(error: string): string {
  const m = /^([A-Za-z_$][\w$.]*):/.exec(error);
  return m ? (m[1] as string) : '_OTHER';
}

/** `error.type` of what a driver rejected with: its class (`StoreError`, `LeaseLostError`), else `_OTHER`. */
function errorClass(e: unknown): string {
  try {
    if (!(e instanceof Error)) return '_OTHER';
    const ctor = (e as { constructor?: { name?: unknown } }).constructor?.name;
    const name = e.name === 'Error' && typeof ctor === 'string' && ctor !== '' ? ctor : e.name;
    return typeof name === 'string' && name !== '' ? name : '_OTHER';
  } catch {
    return '_OTHER';
  }
}

/** The status message of a driver that rejected: `Name: message`, whatever was thrown. */
function describe(e: unknown): string {
  try {
    return e instanceof Error ? `${errorClass(e)}: ${e.message}` : String(e);
  } catch {
    return '(a thrown value that cannot be described)';
  }
}
