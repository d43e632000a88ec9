/**
 * A turn's tool parts: each call of a step as the AI SDK's tool part, known by the resultId its
 * action runs under (see part-ids.ts) — its input, the approval asked on it and the person's
 * answer (with the arguments they approved instead of the model's), the latest request about it,
 * and its output, each sent once. A stopped or cancelled turn ends the parts still open here. The
 * chunk table is in docs/chat.md; why a part keeps the proposal beside what ran:
 * docs/design/control.md#edit-on-approval.
 * @module
 */
import type { Action, InputReply, JsonObject, JsonValue, StepActionStatus } from '../core/index.ts';
import type { UIMessageChunk } from 'ai';
import { askReason } from './child-asks.ts';
import type { ChildAsk } from './child-asks.ts';
import { actionKey, approvalIdOf, callOfRequest, inputRequestOf } from './part-ids.ts';

type ToolPart = {
  readonly stepIndex: number;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly dynamic: boolean;
  /** The resultId of the part's approval request, once asked (a sub-agent may ask again: the latest). */
  approval: string | null;
  /** The person's answer to the part's approval request, null before one. */
  approved: boolean | null;
  /** The resultId of the latest approval or answer request about the part, once asked. */
  asked: string | null;
  output: boolean;
  /** The part's input: the arguments the model proposed (`{ source }` for code). */
  readonly input: JsonValue;
  /** The arguments a person approved the call with instead, once they did. */
  edited: JsonObject | null;
};

/** What a tool part of a cancelled turn says. */
export const CANCELLED_CALL = 'The turn was cancelled before this tool call ran.';

/** A person's reply as far as the stream shows it: a live event knows only its kind. */
export type ShownInput = Pick<InputReply, 'kind'> & { readonly reason?: string; readonly arguments?: JsonObject };

/** The tool parts of one turn, by the resultId their call runs under (`s{i}.action`, `s{i}.a{j}`). */
export class ToolParts {
  readonly #runId: string;
  readonly #emit: (chunk: UIMessageChunk) => void;
  readonly #tools = new Map<string, ToolPart>();

  constructor(runId: string, emit: (chunk: UIMessageChunk) => void) {
    this.#runId = runId;
    this.#emit = emit;
  }

  /** Whether the call `call` has its tool part already. */
  has(call: string): boolean {
    return this.#tools.has(call);
  }

  /** The tool part an input request (`s{i}.input`, `s{i}.a{j}.input`, …) is about, once shown. */
  ofRequest(resultId: string): { readonly toolCallId: string; readonly toolName: string } | undefined {
    return this.#tools.get(callOfRequest(resultId));
  }

  /** The resultId of the latest approval or answer request about the tool part `toolCallId`, or null. */
  requestOf(toolCallId: string): string | null {
    for (const [call, tool] of this.#tools)
      if (tool.toolCallId === toolCallId) return tool.asked ?? inputRequestOf(call);
    return null;
  }

  /**
   * A call's action as a new tool part with its input: `tool-<name>`, or code as the dynamic tool
   * `code`. `call` is the resultId the action runs under (`s{i}.action`, `s{i}.a{j}`).
   */
  add(stepIndex: number, call: string, action: Action): void {
    // Without a provider id: the step's (`<runId>:s<i>`) for its one call, the call's own for one of several.
    const own = call === actionKey(stepIndex) ? `s${stepIndex}` : call;
    const toolCallId = (action.kind === 'tool_call' ? action.id : undefined) ?? `${this.#runId}:${own}`;
    const code = action.kind !== 'tool_call';
    const toolName = code ? 'code' : action.name;
    const input = code ? { source: action.source } : action.arguments;
    const part = { stepIndex, toolCallId, toolName, dynamic: code, input, edited: null };
    this.#tools.set(call, { ...part, approval: null, approved: null, asked: null, output: false });
    const dynamic = code ? { dynamic: true } : {};
    this.#emit({ type: 'tool-input-available', toolCallId, toolName, input, ...dynamic });
  }

  /**
   * A request `resultId` of kind `kind` about the call `call` (for a sub-agent's, what it really
   * asks, `child`): an approval or answer request becomes the part's latest, and an approval is a
   * new approval request on the part. Returns the part's toolCallId, or null when it has none.
   */
  ask(call: string, resultId: string, kind: string, child: ChildAsk | null): string | null {
    const tool = this.#tools.get(call);
    if (!tool) return null;
    if (kind === 'approval' || kind === 'answer') tool.asked = resultId;
    if (kind === 'approval') {
      // A sub-agent may ask again about the same call: each request is a new approval on the part.
      tool.approval = resultId;
      tool.approved = null;
      const approvalId = approvalIdOf(this.#runId, resultId);
      const about = child === null ? {} : { approvalDescriptor: child, reason: askReason(child) };
      this.#emit({ type: 'tool-approval-request', approvalId, toolCallId: tool.toolCallId, ...about });
    }
    return tool.toolCallId;
  }

  /**
   * A reply to request `resultId`: on the part's open approval, `tool-approval-response` (with a
   * denial's reason, when known). Returns whether the person approved other arguments than the
   * model's: then {@link editPart} shows them.
   */
  answer(resultId: string, reply: ShownInput): boolean {
    const tool = this.#tools.get(callOfRequest(resultId));
    if (!tool || tool.approved !== null || tool.approval !== resultId || reply.kind === 'answer') return false;
    const why = reply.kind === 'cancel' ? CANCELLED_CALL : reply.kind === 'deny' ? reply.reason : undefined;
    this.#approvalResponse(tool, reply.kind === 'approve', why);
    if (reply.kind !== 'approve' || reply.arguments === undefined) return false;
    tool.edited = reply.arguments;
    return true;
  }

  /** The `data-polyloop-edit` part of an approval with edited arguments: what the model proposed, what runs. */
  editPart(resultId: string): void {
    const tool = this.#tools.get(callOfRequest(resultId));
    if (!tool) return;
    const { toolCallId, toolName, input: proposed, edited } = tool;
    const data = { runId: this.#runId, resultId, toolCallId, toolName, proposed, arguments: edited };
    this.#emit({ type: 'data-polyloop-edit', id: approvalIdOf(this.#runId, resultId), data });
  }

  #approvalResponse(tool: ToolPart, approved: boolean, why: string | undefined): void {
    tool.approved = approved;
    const reason = typeof why === 'string' ? { reason: why } : {};
    const approvalId = approvalIdOf(this.#runId, tool.approval ?? '');
    this.#emit({ type: 'tool-approval-response', approvalId, approved, ...reason });
  }

  /**
   * End the open tool parts of a step (of every step: null) whose turn was cancelled or stopped,
   * saying `why`: an approval still asked is refused.
   */
  closeOpen(stepIndex: number | null, why: string): void {
    for (const [call, tool] of this.#tools) {
      if ((stepIndex !== null && tool.stepIndex !== stepIndex) || tool.output) continue;
      if (tool.approval !== null && tool.approved === null) this.#approvalResponse(tool, false, why);
      this.output(call, tool.approved === false ? 'denied' : 'not_executed', why);
    }
  }

  /**
   * A call's tool output, once: `tool-output-denied` for a call whose (latest) approval a person
   * refused, `tool-output-available` for an executed action, `tool-output-error` for the rest (not
   * executed, environment error, refused without an approval request). A call that ran a sub-agent
   * after a person refused the sub-agent's action is `tool-output-denied` too: the AI SDK allows no
   * output after a refused approval (decision 0071). Its output names the sub-agent's run
   * (`providerMetadata.polyloop.childRunId`), and the arguments a person approved the call with
   * instead of the model's (`providerMetadata.polyloop.editedArguments`; `input` stays the proposal).
   */
  output(call: string, status: StepActionStatus, observation: string, childRunId?: string): void {
    const tool = this.#tools.get(call);
    if (!tool || tool.output) return;
    tool.output = true;
    const { toolCallId } = tool;
    const dynamic = tool.dynamic ? { dynamic: true } : {};
    const polyloop = {
      ...(childRunId === undefined ? {} : { childRunId }),
      ...(tool.edited === null ? {} : { editedArguments: tool.edited }),
    };
    const meta = Object.keys(polyloop).length === 0 ? {} : { providerMetadata: { polyloop } };
    if (tool.approved === false) {
      this.#emit({ type: 'tool-output-denied', toolCallId });
    } else if (status === 'executed') {
      this.#emit({ type: 'tool-output-available', toolCallId, output: observation, ...dynamic, ...meta });
    } else {
      this.#emit({ type: 'tool-output-error', toolCallId, errorText: observation, ...dynamic, ...meta });
    }
  }
}
