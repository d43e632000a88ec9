/**
 * Human input over IndexedDBStore in real Chromium: the law at every write point (crashAtEveryWrite
 * from polyloop/testing, a fresh database per case) for a run with approvals, a denial, an answer
 * and settlements of a `never` action in flight; and an open request that a new store instance
 * (a reopened tab) reads back as the same pending request.
 */
import { describe, expect, it } from 'vitest';
import { readRunLog, resume, run, ToolRegistry } from '../../src/core/index.ts';
import type { ToolSpec } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { humanInputLaw, lawProblems } from '../contract/human-input-law.ts';
import { harness, makeTools } from '../node/core/fixtures.ts';
import { freshDbName } from './idb-store.cases.ts';

/** add (safe, needs approval), note (never, needs approval), ask (answered by a person), note again (denied), final. */
const SCRIPT = [
  '{"tool":"add","args":{"a":1,"b":2}}',
  '{"tool":"note","args":{"text":"first"}}',
  '{"tool":"ask","args":{"q":"colour?"}}',
  '{"tool":"note","args":{"text":"second"}}',
  '{"final":"done"}',
];

const askTool: ToolSpec = {
  name: 'ask',
  description: 'Ask the user.',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  answeredBy: 'human',
};

function toolsInto(calls: { push(...lines: string[]): number }): ToolRegistry {
  const gated = makeTools(calls as string[]).map((t) =>
    t.name === 'add' || t.name === 'note' ? { ...t, needsApproval: true } : t,
  );
  return ToolRegistry.of([...gated, askTool]);
}

describe('human input over IndexedDBStore in Chromium', () => {
  it('keeps an open approval across a new store instance: the same pending request, and approving it runs the action once', async () => {
    const dbName = freshDbName('pending');
    const calls: string[] = [];
    const registry = toolsInto(calls);
    const first = harness({
      store: new IndexedDBStore({ dbName }),
      script: SCRIPT,
      tools: [],
      request: { tools: registry, executor: registry.executor() },
    });
    const asked = await run(first.agent, first.request);
    expect(asked).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'approval', resultId: 's0.input' } });
    const reopened = new IndexedDBStore({ dbName });
    const view = readRunLog(await reopened.readLog('run-1'));
    expect(view).toMatchObject({ state: 'awaiting_input', pending: asked.pending });
    const again = harness({
      store: reopened,
      script: SCRIPT,
      tools: [],
      request: { tools: registry, executor: registry.executor() },
    });
    const next = await resume(again.agent, again.request, { input: { kind: 'approve', resultId: 's0.input' } });
    expect(next).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'approval', resultId: 's1.input' } });
    expect(calls).toEqual(['add:{"a":1,"b":2}']);
    await reopened.close();
  });

  it.each(['safe', 'never'] as const)(
    'crashed at every write (model replay %s) and resumed with the same replies, ends with the uninterrupted trajectory; the approved never action ran exactly once, the denied one never',
    async (modelReplayPolicy) => {
      // One database per case (the shared scenario keeps one outside world per case).
      const stores: IndexedDBStore[] = [];
      const result = await humanInputLaw({
        modelReplayPolicy,
        newStore: () => {
          const store = new IndexedDBStore({ dbName: freshDbName('law9') });
          stores.push(store);
          return store;
        },
      });
      await Promise.all(stores.map((s) => s.close()));
      expect(lawProblems(result)).toEqual([]);
    },
    120_000,
  );
});
