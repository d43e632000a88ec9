/**
 * One turn's UI message chunks, from its log records (a replay) or its run events (live), or
 * both in sequence: the records a driver found, then the events it delivers. Every chunk is
 * sent once — a step a resumed driver starts again, a tool whose input the log already showed —
 * so a stream that replays a log and then follows the run assembles what an uninterrupted stream
 * would have. The tool parts are kept in tool-parts.ts. The table is in docs/chat.md; how a turn
 * is a run, replayed from its log and then followed: docs/design/README.md#chat.
 * @module
 */
import { acceptedReplies } from '../core/index.ts';
import type { Action, LogRecord, RunEvent, StepActionStatus, StepRecord } from '../core/index.ts';
import type { UIMessageChunk } from 'ai';
import { childAskData, childAskOf } from './child-asks.ts';
import type { AskedRequest } from './child-asks.ts';
import { actionKey, approvalIdOf, callKey, callOfRequest, reasoningId, settleIdOf, textId } from './part-ids.ts';
import { CANCELLED_CALL, ToolParts } from './tool-parts.ts';
import type { ShownInput } from './tool-parts.ts';
import { chunkFinishReason, stoppedText } from './turn-ending.ts';
import type { TurnEnding, TurnMetadata } from './turn-ending.ts';

/** One call of a step, by the resultId its action runs under. */
type ShownCall = { readonly resultId: string; readonly action: Action };

/** A reply as far as the stream shows it. */
type ShownReply = { readonly text: string; readonly reasoning: string | null };

/** A turn's chunks, each sent once; `emit` receives them in order. */
export class TurnChunks {
  readonly #runId: string;
  readonly #emit: (chunk: UIMessageChunk) => void;
  /** Called after a reply to `resultId` was shown: where a stream that answers it starts. */
  readonly #onReply: (resultId: string) => void;
  readonly #started = new Set<number>();
  readonly #finished = new Set<number>();
  readonly #text = new Map<number, 'open' | 'closed'>();
  readonly #reasoning = new Map<number, 'open' | 'closed'>();
  readonly #tools: ToolParts;
  readonly #settles = new Map<string, Record<string, unknown>>();
  readonly #asked = new Set<string>();

  constructor(runId: string, emit: (chunk: UIMessageChunk) => void, onReply: (resultId: string) => void = () => {}) {
    this.#runId = runId;
    this.#emit = emit;
    this.#onReply = onReply;
    this.#tools = new ToolParts(runId, emit);
  }

  /** The tool part an input request (`s{i}.input`, `s{i}.a{j}.input`, …) is about, once shown. */
  toolOfRequest(resultId: string): { readonly toolCallId: string; readonly toolName: string } | undefined {
    return this.#tools.ofRequest(resultId);
  }

  /** The resultId of the latest approval or answer request about the tool part `toolCallId`, or null. */
  requestOfTool(toolCallId: string): string | null {
    return this.#tools.requestOf(toolCallId);
  }

  /**
   * One log record, as a replay shows it. `run_started` and `run_ended` show nothing here (see
   * {@link end}); nor do `upgrade` and `resumed`: a turn shows the conversation, not the code or the
   * driver that carried it on.
   */
  record(rec: LogRecord): void {
    switch (rec.kind) {
      case 'intent':
        this.startStep(rec.stepIndex);
        if (rec.intent === 'action') this.toolInput(rec.stepIndex, actionKey(rec.stepIndex), rec.decision.action);
        if (rec.intent === 'actions') {
          const calls = rec.decision.calls.map((c, j) => ({ resultId: callKey(rec.stepIndex, j), action: c.action }));
          this.callInputs(rec.stepIndex, calls);
        }
        return;
      case 'call_result':
        return this.output(rec.resultId, rec.outcome.status, rec.outcome.observation, rec.childRunId);
      case 'result':
        this.startStep(rec.stepIndex);
        this.reply(rec.stepIndex, { text: rec.reply.text, reasoning: rec.reply.reasoning });
        return;
      case 'input_request':
        this.startStep(rec.stepIndex);
        this.request(rec.stepIndex, rec.resultId, rec.request);
        return;
      case 'input':
        this.received(rec.stepIndex, rec.resultId, rec.reply);
        return;
      case 'step':
        this.stepDone(rec.step, rec.actionResult?.outcome.observation ?? null);
        return;
      default:
        return;
    }
  }

  /**
   * One run event, as a live stream shows it. `run_ended` shows nothing here: the host ends the
   * stream with {@link end} once it knows the run's result (tokens, failure text).
   */
  event(e: RunEvent): void {
    switch (e.type) {
      case 'step_started':
        return this.startStep(e.stepIndex);
      case 'model_delta':
        return e.kind === 'reasoning' ? this.reasoningDelta(e.stepIndex, e.delta) : this.delta(e.stepIndex, e.delta);
      case 'model_call_finished':
        return this.closeText(e.stepIndex);
      case 'decision':
        return e.calls ? this.callInputs(e.stepIndex, e.calls) : undefined;
      case 'action_started':
        return this.toolInput(e.stepIndex, e.resultId, e.action);
      case 'action_finished':
        return this.output(e.resultId, e.outcome.status, e.outcome.observation, e.childRunId);
      case 'input_requested':
        return this.request(e.stepIndex, e.resultId, e.request);
      case 'input_received':
        return this.received(e.stepIndex, e.resultId, { kind: e.kind });
      case 'step_finished':
        return this.stepDone(e.step, null);
      default:
        return;
    }
  }

  /** `start-step`, once per step. */
  startStep(stepIndex: number): void {
    if (this.#started.has(stepIndex)) return;
    this.#started.add(stepIndex);
    this.#emit({ type: 'start-step' });
  }

  /** A text delta of step `i`'s model call: opens the step's text part on the first one (ending its reasoning). */
  delta(stepIndex: number, delta: string): void {
    if (delta === '' || this.#text.get(stepIndex) === 'closed') return;
    const id = textId(stepIndex);
    if (!this.#text.has(stepIndex)) {
      this.startStep(stepIndex);
      this.#closeReasoning(stepIndex);
      this.#text.set(stepIndex, 'open');
      this.#emit({ type: 'text-start', id });
    }
    this.#emit({ type: 'text-delta', id, delta });
  }

  /**
   * A reasoning delta of step `i`'s model call: opens the step's reasoning part on the first one.
   * The part ends when the text starts or the call finishes; reasoning after that is not shown
   * live (one reasoning part per step, before its text, as a replay shows it).
   */
  reasoningDelta(stepIndex: number, delta: string): void {
    if (delta === '' || this.#reasoning.get(stepIndex) === 'closed' || this.#text.has(stepIndex)) return;
    const id = reasoningId(stepIndex);
    if (!this.#reasoning.has(stepIndex)) {
      this.startStep(stepIndex);
      this.#reasoning.set(stepIndex, 'open');
      this.#emit({ type: 'reasoning-start', id });
    }
    this.#emit({ type: 'reasoning-delta', id, delta });
  }

  #closeReasoning(stepIndex: number): void {
    if (this.#reasoning.get(stepIndex) !== 'open') return;
    this.#reasoning.set(stepIndex, 'closed');
    this.#emit({ type: 'reasoning-end', id: reasoningId(stepIndex) });
  }

  /** Close step `i`'s reasoning and text parts if they are open. */
  closeText(stepIndex: number): void {
    this.#closeReasoning(stepIndex);
    if (this.#text.get(stepIndex) !== 'open') return;
    this.#text.set(stepIndex, 'closed');
    this.#emit({ type: 'text-end', id: textId(stepIndex) });
  }

  /**
   * A finished reply of step `i`: its reasoning, then its text as one part — each unless already
   * shown (text that streamed in is closed, not repeated).
   */
  reply(stepIndex: number, reply: ShownReply): void {
    this.startStep(stepIndex);
    this.reasoning(stepIndex, reply.reasoning);
    if (this.#text.get(stepIndex) === 'open') return this.closeText(stepIndex);
    if (this.#text.has(stepIndex) || reply.text === '') return;
    this.#text.set(stepIndex, 'closed');
    const id = textId(stepIndex);
    this.#emit({ type: 'text-start', id });
    this.#emit({ type: 'text-delta', id, delta: reply.text });
    this.#emit({ type: 'text-end', id });
  }

  /** Step `i`'s reasoning as one part, once: reasoning that streamed in is closed, not repeated. */
  reasoning(stepIndex: number, reasoning: string | null): void {
    this.#closeReasoning(stepIndex);
    if (reasoning === null || reasoning === '' || this.#reasoning.has(stepIndex)) return;
    this.#reasoning.set(stepIndex, 'closed');
    const id = reasoningId(stepIndex);
    this.#emit({ type: 'reasoning-start', id });
    this.#emit({ type: 'reasoning-delta', id, delta: reasoning });
    this.#emit({ type: 'reasoning-end', id });
  }

  /** Every call of a step with several, each as its tool part, in the provider's order: before any runs or asks. */
  callInputs(stepIndex: number, calls: readonly ShownCall[]): void {
    for (const c of calls) this.toolInput(stepIndex, c.resultId, c.action);
  }

  /**
   * A call's action as a tool part with its input, once: `tool-<name>`, or code as the dynamic
   * tool `code`. `call` is the resultId the action runs under (`s{i}.action`, `s{i}.a{j}`).
   */
  toolInput(stepIndex: number, call: string, action: Action): void {
    if (this.#tools.has(call)) return;
    this.startStep(stepIndex);
    this.closeText(stepIndex);
    this.#tools.add(stepIndex, call, action);
  }

  /**
   * An input request: an approval request on the tool part, a tool part to fill, or a settlement
   * data part. A sub-agent's request (kind `child`) shows what it really asks the same way, on the
   * tool part of the parent's call, and a `data-polyloop-child` part names the sub-agent's action.
   */
  request(stepIndex: number, resultId: string, asked: AskedRequest): void {
    if (this.#asked.has(resultId)) return;
    this.#asked.add(resultId);
    this.startStep(stepIndex);
    const call = callOfRequest(resultId);
    const action = actionOf(asked.decision);
    if (action !== null) this.toolInput(stepIndex, call, action);
    const child = childAskOf(asked);
    const kind = child?.kind ?? asked.kind;
    const toolCallId = this.#tools.ask(call, resultId, kind, child);
    if (kind === 'settle') {
      const target = child?.target ?? asked.target;
      const accepts = [...acceptedReplies(asked)];
      const data = { runId: this.#runId, resultId, stepIndex, target, action: child?.action ?? action, accepts };
      this.#settles.set(resultId, data);
      this.#emit({ type: 'data-polyloop-settle', id: settleIdOf(this.#runId, resultId), data });
    }
    if (child === null) return;
    const where = { runId: this.#runId, resultId, stepIndex };
    const data = childAskData(where, toolCallId, child, asked);
    this.#emit({ type: 'data-polyloop-child', id: approvalIdOf(this.#runId, resultId), data });
  }

  /**
   * A reply landed: on an approval, `tool-approval-response` (and, when the person approved other
   * arguments, a `data-polyloop-edit` part: what the model proposed, what runs); on a settlement,
   * its data part again with the reply. A live event knows only the kind: a denial's reason is
   * then not shown.
   */
  received(stepIndex: number, resultId: string, reply: ShownInput): void {
    const settle = this.#settles.get(resultId);
    let edited = false;
    if (settle) {
      const data = { ...settle, reply: { ...reply, resultId } };
      this.#emit({ type: 'data-polyloop-settle', id: settleIdOf(this.#runId, resultId), data });
    } else {
      edited = this.#tools.answer(resultId, reply);
    }
    // A cancelled turn never finishes the step: its tool parts end here, every one of them.
    if (!settle && reply.kind === 'cancel') this.#tools.closeOpen(stepIndex, CANCELLED_CALL);
    this.#onReply(resultId);
    // After the reply's mark: the page that sent the edit gets the part back whole (the proposal beside it).
    if (edited) this.#tools.editPart(resultId);
  }

  /** A call's tool output, once (see {@link ToolParts.output}). */
  output(call: string, status: StepActionStatus, observation: string, childRunId?: string): void {
    this.#tools.output(call, status, observation, childRunId);
  }

  /** A completed step: what nothing before showed of it (text, reasoning, tool output), then `finish-step`. */
  stepDone(step: StepRecord, observation: string | null): void {
    const i = step.stepIndex;
    this.startStep(i);
    if (this.#text.get(i) === 'open') this.closeText(i);
    else this.reply(i, { text: step.modelText ?? '', reasoning: null });
    this.reasoning(i, step.reasoning);
    if (step.decision === 'action' && step.actionStatus !== null) {
      if (step.calls) for (const c of step.calls) this.output(c.resultId, c.status, c.observation, c.childRunId);
      else this.output(actionKey(i), step.actionStatus, observation ?? step.observation ?? '', step.childRunId);
    }
    if (this.#finished.has(i)) return;
    this.#finished.add(i);
    this.#emit({ type: 'finish-step' });
  }

  /**
   * The end of a stream: a cancelled or stopped turn's open tool parts ended (saying why), a
   * stopped turn's `data-polyloop-stop` part (`{ runId, reason? }`), `error` with the failure text
   * of a failed run, then `finish` (its metadata with the stop request, if any).
   */
  end(ending: TurnEnding): void {
    for (const [i, state] of this.#reasoning) if (state === 'open') this.#closeReasoning(i);
    for (const [i, state] of this.#text) if (state === 'open') this.closeText(i);
    const { stopReason, usage, stopRequest } = ending;
    const why = stopRequest ? stoppedText(stopRequest) : CANCELLED_CALL;
    if (stopReason === 'cancelled') this.#tools.closeOpen(null, why);
    if (stopRequest) {
      const data = { runId: this.#runId, ...stopRequest };
      this.#emit({ type: 'data-polyloop-stop', id: `${this.#runId}:stop`, data });
    }
    if (ending.error !== null) this.#emit({ type: 'error', errorText: ending.error });
    const stopped = stopRequest ? { stopRequest } : {};
    const messageMetadata: TurnMetadata = { runId: this.#runId, stopReason, usage, ...stopped };
    this.#emit({ type: 'finish', finishReason: chunkFinishReason(stopReason), messageMetadata });
  }
}

/** The action a recorded decision names, if any. */
function actionOf(decision: { readonly action: Action } | null): Action | null {
  return decision?.action ?? null;
}
