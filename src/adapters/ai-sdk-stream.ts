/**
 * Gathering an AI SDK `doStream` part stream into the turn `ai-sdk-reply.ts` reads: text and
 * reasoning deltas joined per part id, in order of first appearance, their metadata merged
 * (Anthropic sends a thinking block's signature in a late delta), text deltas reported as they
 * arrive, and the `finish` part's reason, usage and metadata.
 * @module
 */
import type { AiSdkTurn } from './ai-sdk-reply.ts';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

type Slot = { type: 'text' | 'reasoning'; text: string; providerMetadata: Record<string, Record<string, unknown>> };

function mergeMetadata(slot: Slot, md: unknown): void {
  if (!isRecord(md)) return;
  for (const [key, value] of Object.entries(md)) if (isRecord(value)) slot.providerMetadata[key] = { ...slot.providerMetadata[key], ...value };
}

/** A stream that failed: its `error` part, or an end without a `finish` part. */
export class AiSdkStreamError extends Error {
  override readonly name = 'AiSdkStreamError';
}

type Gathered = { parts: ({ slot: Slot } | { part: Record<string, unknown> })[]; slots: Map<string, Slot>; turn: Omit<AiSdkTurn, 'content'> | null; responseId: unknown };

function slotFor(g: Gathered, type: Slot['type'], id: unknown): Slot {
  const key = `${type}:${String(id)}`;
  let slot = g.slots.get(key);
  if (!slot) {
    slot = { type, text: '', providerMetadata: {} };
    g.slots.set(key, slot);
    g.parts.push({ slot });
  }
  return slot;
}

function apply(g: Gathered, part: Record<string, unknown>, onDelta: ((d: string) => void) | undefined): void {
  const type = part['type'];
  if (type === 'text-start' || type === 'text-delta' || type === 'text-end') {
    const slot = slotFor(g, 'text', part['id']);
    mergeMetadata(slot, part['providerMetadata']);
    if (type === 'text-delta' && typeof part['delta'] === 'string' && part['delta'] !== '') {
      slot.text += part['delta'];
      onDelta?.(part['delta']);
    }
  } else if (type === 'reasoning-start' || type === 'reasoning-delta' || type === 'reasoning-end') {
    const slot = slotFor(g, 'reasoning', part['id']);
    mergeMetadata(slot, part['providerMetadata']);
    if (type === 'reasoning-delta' && typeof part['delta'] === 'string') slot.text += part['delta'];
  } else if (type === 'tool-call') {
    g.parts.push({ part });
  } else if (type === 'response-metadata') {
    if (typeof part['id'] === 'string') g.responseId = part['id'];
  } else if (type === 'finish') {
    g.turn = { finishReason: part['finishReason'], usage: part['usage'], providerMetadata: part['providerMetadata'], responseId: null };
  } else if (type === 'error') {
    const e = part['error'];
    throw e instanceof Error ? e : new AiSdkStreamError(`the model's stream reported an error: ${JSON.stringify(e) ?? String(e)}`, { cause: e });
  }
}

/**
 * Read a `doStream` result's `stream` to its end. Abort cancels the reader and rejects with
 * `signal.reason`, untouched, even when the provider's stream does not end on its own.
 */
export async function gatherStream(stream: ReadableStream<unknown>, signal: AbortSignal, onDelta?: (delta: string) => void): Promise<AiSdkTurn> {
  const g: Gathered = { parts: [], slots: new Map(), turn: null, responseId: null };
  const reader = stream.getReader();
  // The provider aborts its fetch too, but a stream it built itself may never notice: cancel here.
  // The cancel's own rejection is irrelevant: the abort reason is what the caller gets.
  const cancel = (): void => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  // An abort while `doStream` was still opening the stream fired before the listener existed.
  if (signal.aborted) cancel();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal.aborted) throw signal.reason;
      if (done) break;
      if (isRecord(value)) apply(g, value, onDelta);
    }
  } finally {
    signal.removeEventListener('abort', cancel);
    reader.releaseLock();
  }
  if (g.turn === null) throw new AiSdkStreamError("the model's stream ended without a finish part");
  const content = g.parts.map((p) => ('slot' in p ? toPart(p.slot) : p.part));
  return { ...g.turn, responseId: g.responseId, content };
}

function toPart(slot: Slot): Record<string, unknown> {
  return Object.keys(slot.providerMetadata).length === 0 ? { type: slot.type, text: slot.text } : { type: slot.type, text: slot.text, providerMetadata: slot.providerMetadata };
}
