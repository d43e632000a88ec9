/**
 * Chunks → one assistant `UIMessage`, as the AI SDK's `readUIMessageStream` builds it, for the
 * chunks this package sends (so `loadChat` needs no run-time `ai`). A test holds the two equal.
 * @module
 */
import type { UIMessage, UIMessageChunk } from 'ai';

type Part = UIMessage['parts'][number];
type ToolLike = Record<string, unknown> & { toolCallId: string; state: string };

/** The message `chunks` build, starting from an empty assistant message with id `id`. */
export function assembleMessage(id: string, chunks: Iterable<UIMessageChunk>): UIMessage {
  const parts: Part[] = [];
  const open = new Map<string, { text: string; state: 'streaming' | 'done' }>();
  const tools = new Map<string, ToolLike>();
  let metadata: unknown;
  for (const chunk of chunks) {
    switch (chunk.type) {
      case 'start-step':
        parts.push({ type: 'step-start' });
        break;
      case 'text-start':
      case 'reasoning-start': {
        const part = chunk.type === 'text-start' ? { type: 'text' as const, text: '', state: 'streaming' as const } : { type: 'reasoning' as const, id: chunk.id, text: '', state: 'streaming' as const };
        open.set(`${part.type}:${chunk.id}`, part);
        parts.push(part);
        break;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const part = open.get(`${chunk.type === 'text-delta' ? 'text' : 'reasoning'}:${chunk.id}`);
        if (part) part.text += chunk.delta;
        break;
      }
      case 'text-end':
      case 'reasoning-end': {
        const key = `${chunk.type === 'text-end' ? 'text' : 'reasoning'}:${chunk.id}`;
        const part = open.get(key);
        if (part) part.state = 'done';
        open.delete(key);
        break;
      }
      case 'tool-input-available': {
        const base = chunk.dynamic ? { type: 'dynamic-tool', toolName: chunk.toolName } : { type: `tool-${chunk.toolName}` };
        const part: ToolLike = { ...base, toolCallId: chunk.toolCallId, state: 'input-available', input: chunk.input };
        tools.set(chunk.toolCallId, part);
        parts.push(part as unknown as Part);
        break;
      }
      case 'tool-approval-request':
        update(tools.get(chunk.toolCallId), { state: 'approval-requested', approval: { id: chunk.approvalId } });
        break;
      case 'tool-approval-response': {
        const part = [...tools.values()].find((t) => (t['approval'] as { id?: unknown } | undefined)?.id === chunk.approvalId);
        const reason = chunk.reason !== undefined ? { reason: chunk.reason } : {};
        update(part, { state: 'approval-responded', approval: { ...(part?.['approval'] as object), approved: chunk.approved, ...reason } });
        break;
      }
      case 'tool-output-available':
        update(tools.get(chunk.toolCallId), { state: 'output-available', output: chunk.output });
        break;
      case 'tool-output-error':
        update(tools.get(chunk.toolCallId), { state: 'output-error', errorText: chunk.errorText });
        break;
      case 'tool-output-denied':
        update(tools.get(chunk.toolCallId), { state: 'output-denied' });
        break;
      case 'start':
      case 'finish':
        if (chunk.messageMetadata !== undefined) metadata = chunk.messageMetadata;
        break;
      default:
        if (chunk.type.startsWith('data-')) upsertData(parts, chunk as { type: `data-${string}`; id?: string; data: unknown });
    }
  }
  return { id, role: 'assistant', ...(metadata !== undefined ? { metadata } : {}), parts };
}

function update(part: ToolLike | undefined, fields: Record<string, unknown>): void {
  if (part) Object.assign(part, fields);
}

/** A data part replaces the data of the part with its type and id, as the AI SDK does. */
function upsertData(parts: Part[], chunk: { type: `data-${string}`; id?: string; data: unknown }): void {
  const existing = chunk.id === undefined ? undefined : parts.find((p) => p.type === chunk.type && (p as { id?: unknown }).id === chunk.id);
  if (existing) (existing as { data: unknown }).data = chunk.data;
  else parts.push({ type: chunk.type, ...(chunk.id !== undefined ? { id: chunk.id } : {}), data: chunk.data } as Part);
}
