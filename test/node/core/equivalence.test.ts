/**
 * The equivalence law (docs/design/laws.md#equivalence): for a deterministic model and `safe`
 * policies, crashing at any write point and resuming yields the uninterrupted trajectory
 * (timestamps aside), and the model sees byte-identical messages at every call.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, isPolyLoopError, resume, run } from '../../../src/core/index.ts';
import type { ModelCall, RunResult } from '../../../src/core/index.ts';
import { faultyStore, SimulatedCrashError } from '../../../src/testing/index.ts';
import type { Script } from '../../../src/testing/index.ts';
import { harness, NATIVE_SCRIPT, nativeInterpreter, safeTools, STANDARD_SCRIPT, timeless } from './fixtures.ts';
import type { Harness } from './fixtures.ts';

type Variant = { readonly name: string; readonly script: Script; readonly native: boolean };

const VARIANTS: Variant[] = [
  {
    name: 'a text-protocol run (tool calls, an invalid reply, an unknown tool, a final answer)',
    script: STANDARD_SCRIPT,
    native: false,
  },
  {
    name: 'a native tool-calling run (reasoning, parallel calls refused, an unknown tool, a final answer)',
    script: NATIVE_SCRIPT,
    native: true,
  },
];

function make(variant: Variant, store: InMemoryStore | ReturnType<typeof faultyStore>, calls: string[] = []): Harness {
  return harness({
    script: variant.script,
    store,
    tools: safeTools(calls),
    calls,
    ...(variant.native ? { interpreter: nativeInterpreter() } : {}),
  });
}

async function reference(
  variant: Variant,
): Promise<{ result: RunResult; calls: readonly ModelCall[]; writes: number; sideEffects: string[] }> {
  const counting = faultyStore(new InMemoryStore(), { crashAfterWrites: Number.POSITIVE_INFINITY });
  const h = make(variant, counting);
  const result = await run(h.agent, h.request);
  return { result, calls: h.model.calls, writes: counting.writes.length, sideEffects: h.calls };
}

const messagesOf = (call: ModelCall): string =>
  JSON.stringify({ messages: call.messages, tools: call.tools, binding: call.binding, resultId: call.resultId });

describe.each(VARIANTS)('the equivalence law for $name', (variant) => {
  it('holds when the process crashes before each write, and when each write lands but its promise never resolves', async () => {
    const ref = await reference(variant);
    expect(ref.result.stopReason).toBe('final_answer');
    expect(ref.writes).toBeGreaterThan(15);
    const expected = ref.calls.map(messagesOf);
    let checked = 0;
    for (let k = 0; k < ref.writes; k++) {
      for (const landsBeforeThrow of [false, true]) {
        const inner = new InMemoryStore();
        const crashing = faultyStore(inner, { crashAfterWrites: k, landsBeforeThrow });
        const first = make(variant, crashing);
        const crash = await run(first.agent, first.request).then(
          () => null,
          (e: unknown) => e,
        );
        expect(isPolyLoopError(crash, 'store_error'), `write ${k}: the crashed run rejects with StoreError`).toBe(true);
        expect((crash as Error).cause).toBeInstanceOf(SimulatedCrashError);

        const second = make(variant, inner);
        const started = (await inner.readLog('run-1')).length > 0;
        const result = started ? await resume(second.agent, second.request) : await run(second.agent, second.request);

        const where = `crash at write ${k}${landsBeforeThrow ? ' (landed)' : ''}`;
        expect(timeless(result.trajectory), where).toEqual(timeless(ref.result.trajectory));
        expect({ ...result, trajectory: null }, where).toEqual({ ...ref.result, trajectory: null });
        for (const call of [...first.model.calls, ...second.model.calls]) {
          expect(messagesOf(call), `${where}, model call ${call.callSeq}`).toBe(expected[call.callSeq]);
        }
        const seen = new Set([...first.model.calls, ...second.model.calls].map((c) => c.callSeq));
        expect(seen.size, where).toBe(ref.calls.length);
        checked++;
      }
    }
    expect(checked).toBe(ref.writes * 2);
  });

  it('answers every native tool call in the next user message, in order, before any text', async () => {
    const ref = await reference(variant);
    if (!variant.native) {
      expect(ref.calls.every((c) => c.messages.every((m) => m.content.every((b) => b.type === 'text')))).toBe(true);
      return;
    }
    const last = ref.calls.at(-1) as ModelCall;
    const history = last.messages.slice(-8);
    expect(history.map((m) => m.role)).toEqual([
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    expect(history[0]?.content).toEqual(NATIVE_SCRIPT[0]?.content);
    expect(history[1]?.content).toEqual([{ type: 'tool_result', toolCallId: 'call_0', text: 'Observation:\n3' }]);
    expect(history[3]?.content).toEqual([
      { type: 'tool_result', toolCallId: 'call_1a', text: 'Call one tool at a time; you called 2.' },
      { type: 'tool_result', toolCallId: 'call_1b', text: 'Call one tool at a time; you called 2.' },
    ]);
    expect(history[5]?.content).toEqual([
      { type: 'tool_result', toolCallId: 'call_2', text: 'Observation:\nThe action was not executed.' },
    ]);
    expect(history[7]?.content).toEqual([{ type: 'tool_result', toolCallId: 'call_3', text: 'Observation:\n7' }]);
    expect(ref.result.trajectory[0]?.toolCallId).toBe('call_0');
    expect(ref.calls.every((c) => c.tools.map((t) => t.name).join() === 'add,note,submit')).toBe(true);
  });
});
