/**
 * SPEC §9 over IndexedDBStore in real Chromium: the law at every write point (crashAtEveryWrite
 * from polyloop/testing, a fresh database per case) for a run with approvals, a denial, an answer
 * and settlements of a `never` action in flight; and an open request that a new store instance
 * (a reopened tab) reads back as the same pending request.
 */
import { describe, expect, it } from 'vitest';
import { readRunLog, resume, run, ToolRegistry } from '../../src/core/index.ts';
import type { InputReply, RunStore, ToolSpec } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { crashAtEveryWrite } from '../../src/testing/index.ts';
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

const askTool: ToolSpec = { name: 'ask', description: 'Ask the user.', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, answeredBy: 'human' };

function toolsInto(calls: { push(...lines: string[]): number }): ToolRegistry {
  const gated = makeTools(calls as string[]).map((t) => (t.name === 'add' || t.name === 'note' ? { ...t, needsApproval: true } : t));
  return ToolRegistry.of([...gated, askTool]);
}

describe('human input over IndexedDBStore in Chromium', () => {
  it('keeps an open approval across a new store instance: the same pending request, and approving it runs the action once', async () => {
    const dbName = freshDbName('pending');
    const calls: string[] = [];
    const registry = toolsInto(calls);
    const first = harness({ store: new IndexedDBStore({ dbName }), script: SCRIPT, tools: [], request: { tools: registry, executor: registry.executor() } });
    const asked = await run(first.agent, first.request);
    expect(asked).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'approval', resultId: 's0.input' } });
    const reopened = new IndexedDBStore({ dbName });
    const view = readRunLog(await reopened.readLog('run-1'));
    expect(view).toMatchObject({ state: 'awaiting_input', pending: asked.pending });
    const again = harness({ store: reopened, script: SCRIPT, tools: [], request: { tools: registry, executor: registry.executor() } });
    const next = await resume(again.agent, again.request, { input: { kind: 'approve', resultId: 's0.input' } });
    expect(next).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'approval', resultId: 's1.input' } });
    expect(calls).toEqual(['add:{"a":1,"b":2}']);
    await reopened.close();
  });

  it.each(['safe', 'never'] as const)(
    'crashed at every write (model replay %s) and resumed with the same replies, ends with the uninterrupted trajectory; the approved never action ran exactly once, the denied one never',
    async (modelReplayPolicy) => {
      // One "outside world" and one database per case.
      const worlds: string[][] = [];
      const stores: IndexedDBStore[] = [];
      const registry = toolsInto({ push: (...lines: string[]) => worlds.at(-1)!.push(...lines) });
      const report = await crashAtEveryWrite({
        store: (): RunStore => {
          worlds.push([]);
          const store = new IndexedDBStore({ dbName: freshDbName('law9') });
          stores.push(store);
          return store;
        },
        setup: (store) => {
          const h = harness({ store, script: SCRIPT, tools: [], request: { tools: registry, executor: registry.executor(), modelReplayPolicy } });
          return { agent: h.agent, request: h.request };
        },
        reply: (p): InputReply => {
          const action = p.decision?.action;
          const text = action?.kind === 'tool_call' ? (action.arguments as { text?: string }).text : undefined;
          if (p.kind === 'answer') return { kind: 'answer', resultId: p.resultId, text: 'Blue.' };
          if (p.kind === 'settle' && p.target === 'model_call') return { kind: 'retry', resultId: p.resultId };
          if (p.kind === 'settle') {
            // Answered from the outside world: did the note happen?
            const happened = worlds.at(-1)!.includes(`note:${text}`);
            return happened ? { kind: 'executed', resultId: p.resultId, observation: `noted ${text}` } : { kind: 'retry', resultId: p.resultId };
          }
          if (text === 'second') return { kind: 'deny', resultId: p.resultId, reason: 'Enough notes.' };
          return { kind: 'approve', resultId: p.resultId };
        },
      });
      await Promise.all(stores.map((s) => s.close()));
      expect(report.failures).toEqual([]);
      expect(report.reference.trajectory.map((s) => s.actionStatus)).toEqual(['executed', 'executed', 'executed', 'denied', null]);
      expect(report.writes).toBeGreaterThan(20);
      expect(report.cases).toHaveLength(report.writes * 2);
      expect(worlds).toHaveLength(report.cases.length + 1);
      for (const world of worlds) {
        expect(world.filter((c) => c === 'note:first')).toHaveLength(1);
        expect(world.filter((c) => c === 'note:second')).toHaveLength(0);
      }
    },
    120_000,
  );
});
