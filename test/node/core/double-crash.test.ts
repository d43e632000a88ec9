/**
 * The equivalence law (docs/design/laws.md#equivalence) under a second crash: crash at any write of
 * a run, crash again at any write of the resume that follows, resume again — still the
 * uninterrupted trajectory (timestamps aside), with byte-identical model input per callSeq across
 * all three attempts. With a `never` tool in the run it executes exactly once over all attempts:
 * when it was in flight at a crash, a person settles it from what the outside world shows.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, isPolyLoopError, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { ModelCall, RunResult, RunStore } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { harness, makeTools, safeTools, STANDARD_SCRIPT, timeless } from './fixtures.ts';
import type { Harness } from './fixtures.ts';

type Policy = 'safe' | 'never';
/**
 * One compiled registry per policy (compiling schemas per attempt would double the test's time);
 * its handlers record into whichever side-effect list `sideEffects.current` points at.
 */
const sideEffects: { current: string[] } = { current: [] };
const recorder = { push: (...lines: string[]) => sideEffects.current.push(...lines) } as unknown as string[]; // the handlers only push
const REGISTRIES = { safe: ToolRegistry.of(safeTools(recorder)), never: ToolRegistry.of(makeTools(recorder)) };
const messagesOf = (call: ModelCall): string =>
  JSON.stringify({ messages: call.messages, tools: call.tools, binding: call.binding, resultId: call.resultId });
const LANDS = [false, true] as const;

type Attempt = { readonly h: Harness; readonly outcome: RunResult | unknown };

let settlements = 0;

/**
 * One process lifetime: start the run, or resume it when its log has records (a crash before
 * run_started leaves none); a settle request (a never action was in flight) is answered
 * from the outside world — `executed` when the note happened, `retry` when it did not.
 */
async function attempt(policy: Policy, store: RunStore, inner: InMemoryStore, calls: string[]): Promise<Attempt> {
  sideEffects.current = calls;
  const registry = REGISTRIES[policy];
  const h = harness({
    script: STANDARD_SCRIPT,
    store,
    calls,
    tools: [],
    request: { tools: registry, executor: registry.executor() },
  });
  const started = (await inner.readLog('run-1')).length > 0;
  let outcome = await (started ? resume : run)(h.agent, h.request).then(
    (r) => r,
    (e: unknown) => e,
  );
  while (typeof outcome === 'object' && outcome !== null && (outcome as RunResult).pending) {
    const { resultId } = (outcome as RunResult).pending!;
    settlements++;
    const input = calls.includes('note:three')
      ? { kind: 'executed' as const, resultId, observation: 'noted three' }
      : { kind: 'retry' as const, resultId };
    outcome = await resume(h.agent, h.request, { input }).then(
      (r) => r,
      (e: unknown) => e,
    );
  }
  return { h, outcome };
}

/** A counting run: its result, model calls and how many writes it made. */
async function counted(
  policy: Policy,
  inner: InMemoryStore,
  calls: string[],
): Promise<Attempt & { readonly writes: number }> {
  const counting = faultyStore(inner, { crashAfterWrites: Number.POSITIVE_INFINITY });
  return { ...(await attempt(policy, counting, inner, calls)), writes: counting.writes.length };
}

/** Crash the first attempt at write k1; the inner store then holds what a real crash leaves. */
async function crashed(
  policy: Policy,
  inner: InMemoryStore,
  calls: string[],
  k: number,
  landsBeforeThrow: boolean,
): Promise<Attempt> {
  const a = await attempt(policy, faultyStore(inner, { crashAfterWrites: k, landsBeforeThrow }), inner, calls);
  expect(isPolyLoopError(a.outcome, 'store_error'), `crash at write ${k}: rejects with StoreError`).toBe(true);
  return a;
}

/** What a triple of attempts did wrong against the reference; empty when the law holds. */
function checker(ref: RunResult, expected: readonly string[]) {
  const want = JSON.stringify(timeless(ref.trajectory));
  const wantRest = JSON.stringify({ ...ref, trajectory: null });
  return (policy: Policy, last: RunResult, attempts: readonly Attempt[], calls: readonly string[]): string[] => {
    const problems: string[] = [];
    if (isPolyLoopError(last) || last instanceof Error) return [`the last resume failed: ${String(last)}`];
    const modelCalls = attempts.flatMap((a) => a.h.model.calls);
    for (const call of modelCalls)
      if (messagesOf(call) !== expected[call.callSeq]) problems.push(`model call ${call.callSeq} saw other input`);
    const notes = calls.filter((c) => c.startsWith('note:'));
    // With settlements every pair ends like the uninterrupted run, a never tool included.
    if (JSON.stringify(timeless(last.trajectory)) !== want)
      problems.push('the trajectory differs from the uninterrupted one');
    if (JSON.stringify({ ...last, trajectory: null }) !== wantRest)
      problems.push(`the result differs: ${last.stopReason}, ${last.steps} steps`);
    if (new Set(modelCalls.map((c) => c.callSeq)).size !== expected.length)
      problems.push('not every model call was made');
    if (policy === 'never' && JSON.stringify(notes) !== '["note:three"]')
      problems.push(`the never tool ran ${notes.length} times`);
    return problems;
  };
}

const VARIANTS = [
  { policy: 'safe', label: 'every tool safe' },
  { policy: 'never', label: 'a never tool (note) among the tools' },
] as const;

describe.each(VARIANTS)('the equivalence law under a double crash, with $label', ({ policy }) => {
  it('holds for every first crash point and every write point of the resume that follows', async () => {
    const ref = await counted(policy, new InMemoryStore(), []);
    const refResult = ref.outcome as RunResult;
    expect(refResult.stopReason).toBe('final_answer');
    const expected = ref.h.model.calls.map(messagesOf);
    const problems: string[] = [];
    const check = checker(refResult, expected);
    const endings = new Map<string, number>();
    let pairs = 0;
    settlements = 0;
    for (let k1 = 0; k1 < ref.writes; k1++) {
      for (const lands1 of LANDS) {
        // How many writes the resume after this first crash makes, so every one of them is a crash point.
        const probe = new InMemoryStore();
        const probeCalls: string[] = [];
        await crashed(policy, probe, probeCalls, k1, lands1);
        const resumeWrites = (await counted(policy, probe, probeCalls)).writes;
        for (let k2 = 0; k2 < resumeWrites; k2++) {
          {
            // Every k1 sees both kinds of second crash, on alternate k2 (all four combinations, half the runs).
            const lands2 = lands1 !== (k2 % 2 === 1);
            const where = `crash at write ${k1}${lands1 ? ' (landed)' : ''}, then at write ${k2} of the resume${lands2 ? ' (landed)' : ''}`;
            const inner = new InMemoryStore();
            const calls: string[] = [];
            const attempts = [
              await crashed(policy, inner, calls, k1, lands1),
              await crashed(policy, inner, calls, k2, lands2),
              await attempt(policy, inner, inner, calls),
            ];
            const last = attempts[2]?.outcome as RunResult;
            problems.push(...check(policy, last, attempts, calls).map((p) => `${where}: ${p}`));
            endings.set(last.stopReason, (endings.get(last.stopReason) ?? 0) + 1);
            pairs++;
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(pairs).toBeGreaterThan(ref.writes * 2);
    expect([...endings.keys()]).toEqual(['final_answer']);
    // Not vacuous: with a never tool some crash pairs leave it in flight, and a person settles it.
    if (policy === 'never') expect(settlements).toBeGreaterThan(0);
    else expect(settlements).toBe(0);
    if (process.env['POLYLOOP_REPORT'])
      console.log(`${policy}: ${ref.writes} writes, ${pairs} crash pairs, ${settlements} settlements`);
  });
});
