/**
 * Reply metadata from providers that send what they should not: finish reasons that name
 * `Object.prototype` members, token counts whose sum no longer fits a safe integer, and an abort
 * that lands while the provider is still opening its stream. None may turn a good reply into a
 * model failure, and an aborted call must still end.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { aiSdkModel } from '../../../src/adapters/ai-sdk.ts';
import { finishReasonOf } from '../../../src/adapters/ai-sdk-reply.ts';
import { anthropicUsage } from '../../../src/adapters/anthropic-wire.ts';
import { modelReplyProblem } from '../../../src/core/internal-entry.ts';
import { modelCall, rejection } from './helpers.ts';

function v3(finishReason: unknown): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'hand.v3',
    modelId: 'm',
    supportedUrls: {},
    doGenerate: async () =>
      ({
        content: [{ type: 'text', text: 'Done.' }],
        finishReason,
        usage: { inputTokens: { total: 3 }, outputTokens: { total: 1 } },
      }) as never,
    doStream: async () => ({ stream: new ReadableStream() }) as never,
  };
}

describe('an AI SDK finish reason that names an Object.prototype member', () => {
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'reads %s as other, so the reply stays well-formed',
    async (raw) => {
      expect(finishReasonOf(raw)).toBe('other');
      expect(finishReasonOf({ unified: raw, raw })).toBe('other');
      const reply = await aiSdkModel(v3({ unified: raw, raw })).call(modelCall());
      expect(reply.finishReason).toBe('other');
      expect(modelReplyProblem(reply)).toBeNull();
    },
  );
});

describe('Anthropic usage whose counts each fit but whose sum does not', () => {
  it('is dropped rather than reported as an unsafe integer core would refuse', () => {
    const big = Number.MAX_SAFE_INTEGER - 1;
    const usage = anthropicUsage({
      input_tokens: big,
      output_tokens: 1,
      cache_creation_input_tokens: big,
      cache_read_input_tokens: big,
    });
    expect(usage).toBeUndefined();
    const reply = { callId: null, text: 'Hi.', ...(usage === undefined ? {} : { usage }) };
    expect(modelReplyProblem(reply)).toBeNull();
  });

  it('is still summed when the sum fits', () => {
    expect(
      anthropicUsage({ input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 3, cache_read_input_tokens: 4 }),
    ).toEqual({ inputTokens: 8, outputTokens: 2, cachedInputTokens: 4 });
  });
});

describe('aiSdkModel streaming, aborted while doStream is still opening the stream', () => {
  it('rejects with signal.reason even though the stream it gets afterwards never ends', async () => {
    const ctrl = new AbortController();
    const reason = new Error('stop now');
    let cancelled: unknown = 'not cancelled';
    const model: LanguageModelV3 = {
      specificationVersion: 'v3',
      provider: 'p',
      modelId: 'm',
      supportedUrls: {},
      doGenerate: async () => ({}) as never,
      // A provider that ignores the signal: it answers after the abort with a stream that never ends.
      doStream: async () => {
        ctrl.abort(reason);
        await new Promise((r) => setTimeout(r, 5));
        return { stream: new ReadableStream({ cancel: (why) => void (cancelled = why) }) } as never;
      },
    };
    const pending = aiSdkModel(model, { stream: true }).call(modelCall({ signal: ctrl.signal }));
    const hung = Symbol('hung');
    const outcome = await Promise.race([rejection(pending), new Promise((r) => setTimeout(() => r(hung), 500))]);
    expect(outcome).toBe(reason);
    expect(cancelled).toBe(reason);
  });
});

describe('AI SDK provider metadata nested deeper than a record may hold', () => {
  const deep = (levels: number): Record<string, unknown> => {
    let v: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < levels; i++) v = { d: v };
    return v;
  };
  const model = (providerMetadata: unknown, partMetadata: unknown): LanguageModelV3 => ({
    specificationVersion: 'v3',
    provider: 'hand.v3',
    modelId: 'm',
    supportedUrls: {},
    doGenerate: async () =>
      ({
        content: [
          { type: 'reasoning', text: 'think', providerMetadata: partMetadata },
          { type: 'text', text: 'Done.' },
        ],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: { total: 3 }, outputTokens: { total: 1 } },
        providerMetadata,
      }) as never,
    doStream: async () => ({ stream: new ReadableStream() }) as never,
  });

  it('is dropped from the reply, which stays well-formed (no model_error for a sloppy provider)', async () => {
    const reply = await aiSdkModel(model({ p: deep(150) }, undefined)).call(modelCall());
    expect(reply.providerMetadata).toBeUndefined();
    expect(reply.text).toBe('Done.');
    expect(modelReplyProblem(reply)).toBeNull();
  });

  it('on a reasoning part, is dropped and the part kept as plain reasoning', async () => {
    const reply = await aiSdkModel(model(undefined, { p: deep(150) })).call(modelCall());
    expect(reply.content).toEqual([
      { type: 'reasoning', text: 'think' },
      { type: 'text', text: 'Done.' },
    ]);
    expect(modelReplyProblem(reply)).toBeNull();
  });

  it('is kept as an opaque block when it is as deep as the reply can still hold', async () => {
    const reply = await aiSdkModel(model(undefined, { p: deep(94) })).call(modelCall());
    expect(reply.content?.[0]).toMatchObject({ type: 'opaque', provider: 'hand.v3' });
    expect(modelReplyProblem(reply)).toBeNull();
  });
});
