/**
 * Chunks → one assistant `UIMessage`, as the AI SDK's `readUIMessageStream` builds it, for the
 * chunks this package sends (so `loadChat` needs no run-time `ai`). A test holds the two equal.
 * @module
 */
import type { UIMessage, UIMessageChunk } from 'ai';

type Part = UIMessage['parts'][number];
type TextChunk = Extract<UIMessageChunk, { type: `${'text' | 'reasoning'}-${'start' | 'delta' | 'end'}` }>;
type DataChunk = { type: `data-${string}`; id?: string; data: unknown };
type ToolLike = Record<string, unknown> & { toolCallId: string; state: string };

/** The message `chunks` build, starting from an empty assistant message with id `id`. */
export function assembleMessage(id: string, chunks: Iterable<UIMessageChunk>): UIMessage {
  const m = new MessageBuilder();
  for (const chunk of chunks) m.add(chunk);
  return { id, role: 'assistant', ...(m.metadata !== undefined ? { metadata: m.metadata } : {}), parts: m.parts };
}

/** One message's parts as chunks arrive: text and reasoning by id, tool parts by tool-call id. */
class MessageBuilder {
  readonly parts: Part[] = [];
  metadata: unknown;
  readonly #open = new Map<string, { text: string; state: 'streaming' | 'done' }>();
  readonly #tools = new Map<string, ToolLike>();

  add(chunk: UIMessageChunk): void {
    switch (chunk.type) {
      case 'start-step':
        return void this.parts.push({ type: 'step-start' });
      case 'text-start':
      case 'text-delta':
      case 'text-end':
      case 'reasoning-start':
      case 'reasoning-delta':
      case 'reasoning-end':
        return this.#text(chunk);
      case 'start':
      case 'finish':
        if (chunk.messageMetadata !== undefined) this.metadata = chunk.messageMetadata;
        return;
      default:
        if (chunk.type.startsWith('data-')) return upsertData(this.parts, chunk as DataChunk);
        return this.#tool(chunk);
    }
  }

  #text(chunk: TextChunk): void {
    const kind = chunk.type.startsWith('text') ? 'text' : 'reasoning';
    const key = `${kind}:${chunk.id}`;
    if (chunk.type === 'text-start' || chunk.type === 'reasoning-start') {
      const state = 'streaming' as const;
      const reasoning = { type: 'reasoning' as const, id: chunk.id, text: '', state };
      const part = kind === 'text' ? { type: 'text' as const, text: '', state } : reasoning;
      this.#open.set(key, part);
      this.parts.push(part);
      return;
    }
    const part = this.#open.get(key);
    if (!part) return;
    if (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') {
      part.text += chunk.delta;
      return;
    }
    part.state = 'done';
    this.#open.delete(key);
  }

  #tool(chunk: UIMessageChunk): void {
    const tools = this.#tools;
    switch (chunk.type) {
      case 'tool-input-available': {
        const { toolName } = chunk;
        const base = chunk.dynamic ? { type: 'dynamic-tool', toolName } : { type: `tool-${toolName}` };
        const part: ToolLike = { ...base, toolCallId: chunk.toolCallId, state: 'input-available', input: chunk.input };
        tools.set(chunk.toolCallId, part);
        return void this.parts.push(part as unknown as Part);
      }
      case 'tool-approval-request': {
        const descriptor = chunk.approvalDescriptor != null ? { descriptor: chunk.approvalDescriptor } : {};
        const reason = chunk.reason != null ? { requestReason: chunk.reason } : {};
        const approval = { id: chunk.approvalId, ...descriptor, ...reason };
        return update(tools.get(chunk.toolCallId), { state: 'approval-requested', approval });
      }
      case 'tool-approval-response': {
        const part = [...tools.values()].find((t) => approvalIdOfPart(t) === chunk.approvalId);
        const reason = chunk.reason !== undefined ? { reason: chunk.reason } : {};
        const approval = { ...(part?.['approval'] as object), approved: chunk.approved, ...reason };
        return update(part, { state: 'approval-responded', approval });
      }
      case 'tool-output-available': {
        const meta = chunk.providerMetadata != null ? { resultProviderMetadata: chunk.providerMetadata } : {};
        return update(tools.get(chunk.toolCallId), { state: 'output-available', output: chunk.output, ...meta });
      }
      case 'tool-output-error':
        return update(tools.get(chunk.toolCallId), { state: 'output-error', errorText: chunk.errorText });
      case 'tool-output-denied':
        return update(tools.get(chunk.toolCallId), { state: 'output-denied' });
      default:
        return;
    }
  }
}

function approvalIdOfPart(part: ToolLike): unknown {
  return (part['approval'] as { id?: unknown } | undefined)?.id;
}

function update(part: ToolLike | undefined, fields: Record<string, unknown>): void {
  if (part) Object.assign(part, fields);
}

/** A data part replaces the data of the part with its type and id, as the AI SDK does. */
function upsertData(parts: Part[], chunk: DataChunk): void {
  const same = (p: Part): boolean => p.type === chunk.type && (p as { id?: unknown }).id === chunk.id;
  const existing = chunk.id === undefined ? undefined : parts.find(same);
  if (existing) (existing as { data: unknown }).data = chunk.data;
  else parts.push({ type: chunk.type, ...(chunk.id !== undefined ? { id: chunk.id } : {}), data: chunk.data } as Part);
}
