/**
 * The sub-agent crash law in a step with several calls (docs/design/laws.md#sub-agents): two
 * children run at once, each asks for an approval; crashed at every write of the parent or either
 * child (lost, and landed) and resumed with the same replies, every case ends as the uninterrupted
 * run — the parent and both children — and each child's approved `never` note happens exactly once.
 */
import { expect, it } from 'vitest';
import { innermostRequest, InMemoryStore } from '../../../src/core/index.ts';
import { childRunOf } from '../../../src/core/internal/input.ts';
import type { InputReply, InputRequest, ModelReply } from '../../../src/core/index.ts';
import { crashAtEveryWrite } from '../../../src/testing/index.ts';
import { family, researchCalls } from './family.ts';

const final = (text: string): ModelReply => ({ callId: null, text, reasoning: null });

it('two children paused in one step: every crash point of parent or child ends as the uninterrupted runs, each note once', async () => {
  // Each case's outside world: a fresh store starts a case (the reference's first), and every
  // process of the case, restarted or not, writes its notes there.
  const worlds: string[][] = [];
  const report = await crashAtEveryWrite({
    store: () => (worlds.push([]), new InMemoryStore()),
    setup: (store) => {
      const f = family({
        store,
        effects: worlds.at(-1) as string[],
        native: { replies: [researchCalls('one?', 'two?'), final('both done')], parallelToolCalls: 2 },
      });
      return { agent: f.parent, request: { runId: 'law2', goal: 'find both' } };
    },
    reply: (p: InputRequest): InputReply => {
      const leaf = innermostRequest(p);
      if (leaf.kind !== 'settle') return { kind: 'approve', resultId: p.resultId };
      // A note in flight when its child crashed: settled from the world — it happened, or it is retried.
      const happened = (worlds.at(-1) ?? []).includes(`${childRunOf(p)}:found it`);
      return happened && leaf.target === 'action'
        ? { kind: 'executed', resultId: p.resultId, observation: 'noted found it' }
        : { kind: 'retry', resultId: p.resultId };
    },
  });
  expect(report.failures).toEqual([]);
  expect(report.reference.finalAnswer).toBe('both done');
  expect(report.cases.length).toBeGreaterThan(40);
  // Every case, the reference's first: each child's approved note exactly once.
  for (const [i, world] of worlds.entries())
    expect([...world].sort(), `case ${i}`).toEqual(['law2.s0.a0:found it', 'law2.s0.a1:found it']);
});
