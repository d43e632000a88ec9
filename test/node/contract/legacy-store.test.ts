/**
 * A third-party store written against 1.0 — every method but `resultAndIntent` — keeps working
 * after decision 0040: it passes the store contract, the loop hands it the model result and the
 * action intent as two writes, and the crash law holds at every write point, including the one
 * between those two (the state a torn joint write leaves in a store that has the method).
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, run } from '../../../src/core/index.ts';
import type { RunStore } from '../../../src/core/index.ts';
import { crashAtEveryWrite, faultyStore } from '../../../src/testing/index.ts';
import { runStoreContract } from '../../contract/run-store.contract.ts';
import { harness, STANDARD_SCRIPT } from '../core/fixtures.ts';

/** The 1.0 shape: a plain object forwarding every method of an InMemoryStore but `resultAndIntent`. */
function legacyStore(inner = new InMemoryStore()): RunStore {
  return {
    runStarted: (r, rec) => inner.runStarted(r, rec),
    intent: (r, rec) => inner.intent(r, rec),
    result: (r, id, rec) => inner.result(r, id, rec),
    step: (r, rec) => inner.step(r, rec),
    runEnded: (r, rec) => inner.runEnded(r, rec),
    readLog: (r) => inner.readLog(r),
    inputRequest: (r, rec) => inner.inputRequest(r, rec),
    input: (r, rec) => inner.input(r, rec),
    acquire: (r, o) => inner.acquire(r, o),
  };
}

runStoreContract('a 1.0-style store without resultAndIntent', () => legacyStore(), { lease: 'refuses' });

describe('a 1.0-style store without resultAndIntent', () => {
  it('gets the model result and the action intent of a step as two writes, result first', async () => {
    const store = faultyStore(legacyStore(), { crashAfterWrites: Number.POSITIVE_INFINITY });
    const h = harness({ script: STANDARD_SCRIPT, store });
    expect((await run(h.agent, h.request)).stopReason).toBe('final_answer');
    const methods = store.writes.map((w) => w.method);
    expect(methods).not.toContain('resultAndIntent');
    // Step 0 is an action: model intent, result, action intent, step.
    expect(methods.slice(1, 5)).toEqual(['intent', 'result', 'intent', 'step']);
  });

  it.each(['safe', 'never'] as const)(
    'keeps the crash law at every write point with modelReplayPolicy %s',
    async (policy) => {
      // One outside world per case, kept across its crash: a settlement is answered from it.
      const worlds: string[][] = [];
      const world = (): string[] => worlds.at(-1) as string[];
      const report = await crashAtEveryWrite({
        store: () => (worlds.push([]), legacyStore()),
        setup: (store) => {
          const h = harness({ script: STANDARD_SCRIPT, store, calls: world(), request: { modelReplayPolicy: policy } });
          return { agent: h.agent, request: h.request };
        },
        reply: (p) => {
          if (p.kind !== 'settle') return { kind: 'approve', resultId: p.resultId };
          const ran = p.target === 'action' && world().includes('note:three');
          return ran
            ? { kind: 'executed', resultId: p.resultId, observation: 'noted three' }
            : { kind: 'retry', resultId: p.resultId };
        },
      });
      expect(report.writes).toBeGreaterThan(20);
      expect(report.failures).toEqual([]);
    },
  );
});
