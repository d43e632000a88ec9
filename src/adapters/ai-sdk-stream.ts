/**
 * Gathering an AI SDK `doStream` part stream into the turn `ai-sdk-reply.ts` reads: text and
 * reasoning deltas joined per part id, in order of first appearance, their metadata merged
 * (Anthropic sends a thinking block's signature in a late delta), text and reasoning deltas reported
 * as they arrive, and the `finish` part's reason, usage and metadata.
 * @module
 */
import { PolyLoopError } from '../core/index.ts';
import type { ModelCall } from '../core/index.ts';
import type { AiSdkTurn } from './ai-sdk-reply.ts';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

type Slot = { type: 'text' | 'reasoning'; text: string; providerMetadata: Record<string, Record<string, unknown>> };

function mergeMetadata(slot: Slot, md: unknown): void {
  if (!isRecord(md)) return;
  for (const [key, value] of Object.entries(md))
    if (isRecord(value)) slot.providerMetadata[key] = { ...slot.providerMetadata[key], ...value };
}

/**
 * A stream that failed: its `error` part, an end without a `finish` part, or a finish without the
 * provider's reason. Code `model_call`: the run ends `model_error`.
 */
export class AiSdkStreamError extends PolyLoopError {
  override readonly name = 'AiSdkStreamError';
  constructor(message?: string, options?: { cause?: unknown }) {
    super('model_call', message ?? '', options);
  }
}

/**
 * A reply that delivered more than `maxResponseBytes` of text, reasoning and tool input (see
 * {@link ReplySize}); the stream is cancelled. Code `model_call`: the run ends `model_error`.
 */
export class AiSdkResponseTooLargeError extends PolyLoopError {
  override readonly name = 'AiSdkResponseTooLargeError';
  /** The limit that was passed, in bytes. */
  readonly maxResponseBytes: number;
  constructor(maxResponseBytes: number) {
    const what = `${maxResponseBytes} bytes of text, reasoning and tool input`;
    super('model_call', `aiSdkModel: the reply is larger than ${what} (maxResponseBytes)`);
    this.maxResponseBytes = maxResponseBytes;
  }
}

/** Bytes of `s` in UTF-8 (a lone surrogate counts as the 3 bytes of U+FFFD), without encoding it. */
export function utf8Bytes(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a pair: 4 bytes for 2 code units
      i += 1;
    } else n += 2;
  }
  return n;
}

/**
 * The size of a reply as it arrives: an AI SDK model hands over parts, not bytes, so what counts
 * is what a reply is built from — text, reasoning and tool input, in UTF-8 bytes (tool input as
 * it streams in and again in the finished call). Throws {@link AiSdkResponseTooLargeError} past
 * the limit.
 */
export class ReplySize {
  readonly #max: number;
  #seen = 0;
  constructor(maxResponseBytes: number) {
    this.#max = maxResponseBytes;
  }

  /** Count one part (a stream part or a generate result's content part). */
  add(part: Record<string, unknown>): void {
    const type = part['type'];
    let text: unknown;
    if (type === 'text-delta' || type === 'reasoning-delta' || type === 'tool-input-delta') text = part['delta'];
    else if (type === 'text' || type === 'reasoning') text = part['text'];
    else if (type === 'tool-call') text = part['input'];
    else return;
    this.#seen += typeof text === 'string' ? utf8Bytes(text) : 0;
    if (this.#seen > this.#max) throw new AiSdkResponseTooLargeError(this.#max);
  }
}

/**
 * Whether a finish part says the provider's stream ended without its own end of the reply: V4
 * `interrupted`, and what V2 (`'unknown'`) and V3 (`other` with no `raw` reason) say in its place.
 * Providers start from that and replace it when the provider's finish reason arrives, so a stream
 * cut short, with no events, or a JSON body where a stream was asked for, finishes this way.
 */
function untold(finishReason: unknown): boolean {
  if (finishReason === 'unknown') return true;
  if (!isRecord(finishReason)) return false;
  const { unified, raw } = finishReason;
  return unified === 'interrupted' || (raw === undefined && (unified === 'other' || unified === 'unknown'));
}

type Gathered = {
  parts: ({ slot: Slot } | { part: Record<string, unknown> })[];
  slots: Map<string, Slot>;
  turn: Omit<AiSdkTurn, 'content'> | null;
  responseId: unknown;
};

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

type OnDelta = ModelCall['onDelta'];

function apply(g: Gathered, part: Record<string, unknown>, onDelta: OnDelta): void {
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
    if (type === 'reasoning-delta' && typeof part['delta'] === 'string') {
      slot.text += part['delta'];
      // A signature arrives as an empty delta with metadata: nothing to show.
      if (part['delta'] !== '') onDelta?.(part['delta'], 'reasoning');
    }
  } else if (type === 'tool-call') {
    g.parts.push({ part });
  } else if (type === 'response-metadata') {
    if (typeof part['id'] === 'string') g.responseId = part['id'];
  } else if (type === 'finish') {
    g.turn = {
      finishReason: part['finishReason'],
      usage: part['usage'],
      providerMetadata: part['providerMetadata'],
      responseId: null,
    };
  } else if (type === 'error') {
    const e = part['error'];
    throw e instanceof Error
      ? e
      : new AiSdkStreamError(`the model's stream reported an error: ${JSON.stringify(e) ?? String(e)}`, { cause: e });
  }
}

/**
 * Read a `doStream` result's `stream` to its end. Abort cancels the reader and rejects with
 * `signal.reason`, untouched, even when the provider's stream does not end on its own. A reply
 * past `size`'s limit, an `error` part, or a finish without the provider's own reason rejects.
 */
export async function gatherStream(
  stream: ReadableStream<unknown>,
  signal: AbortSignal,
  size: ReplySize,
  onDelta?: OnDelta,
): Promise<AiSdkTurn> {
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
      if (!isRecord(value)) continue;
      size.add(value);
      apply(g, value, onDelta);
    }
  } catch (e) {
    // Stop the provider reading on (its fetch closes): the error is the news, not the cancel's outcome.
    if (!signal.aborted) await reader.cancel(e).catch(() => undefined);
    throw e;
  } finally {
    signal.removeEventListener('abort', cancel);
    reader.releaseLock();
  }
  if (g.turn === null) throw new AiSdkStreamError("the model's stream ended without a finish part");
  if (untold(g.turn.finishReason)) {
    const why = '(cut short, empty, or not a stream); the reply may be incomplete';
    throw new AiSdkStreamError(`the model's stream ended without the provider's finish reason ${why}`);
  }
  const content = g.parts.map((p) => ('slot' in p ? toPart(p.slot) : p.part));
  return { ...g.turn, responseId: g.responseId, content };
}

function toPart(slot: Slot): Record<string, unknown> {
  return Object.keys(slot.providerMetadata).length === 0
    ? { type: slot.type, text: slot.text }
    : { type: slot.type, text: slot.text, providerMetadata: slot.providerMetadata };
}
