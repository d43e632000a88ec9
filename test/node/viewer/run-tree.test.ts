/** The tree of runs the CLI and the viewer show: tree order from the ids, nested requests, and where a reply goes. */
import { describe, expect, it } from 'vitest';
import type { InputRequest } from '../../../src/core/index.ts';
import { askedIn, parentIdOf, replyRoute, treeOrder } from '../../../src/viewer/server/run-tree.ts';

const approval = { resultId: 's1.input', stepIndex: 1, kind: 'approval', target: 'action', decision: null };
const inChild = (runId: string, request: InputRequest, resultId = 's0.c0'): InputRequest => ({
  resultId,
  stepIndex: 0,
  kind: 'child',
  target: 'action',
  decision: null,
  child: { runId, request },
});

describe('the tree of runs', () => {
  it('puts each sub-agent run right under its parent, however deep, and keeps a run whose parent is absent a root', () => {
    const ids = ['b', 'a.s0.action.s3.a1', 'a', 'z.s0.action', 'a.s0.action', 'a.s2.action', 'b.s0.a0'];
    const tree = treeOrder(ids, (id) => id).map((t) => `${t.depth}:${t.row}:${t.parentRunId}`);
    expect(tree).toEqual([
      '0:b:null',
      '1:b.s0.a0:b',
      '0:a:null',
      '1:a.s0.action:a',
      '2:a.s0.action.s3.a1:a.s0.action',
      '1:a.s2.action:a',
      '0:z.s0.action:null',
    ]);
    expect(parentIdOf('order.7.s12.a3')).toBe('order.7');
    expect(parentIdOf('order.7.s12.input')).toBeNull();
  });

  it('finds what a nested child request really asks, and in which run', () => {
    const leaf = approval as InputRequest;
    const nested = inChild('p.s0.action', inChild('p.s0.action.s2.action', leaf, 's2.c0'));
    expect(askedIn(nested)).toEqual({ runId: 'p.s0.action.s2.action', request: leaf });
    expect(askedIn(leaf)).toEqual({ runId: null, request: leaf });
  });

  it('routes a reply to a grandchild through the topmost run waiting on it', async () => {
    const leaf = approval as InputRequest;
    const open: Record<string, InputRequest[]> = {
      p: [inChild('p.s0.action', inChild('p.s0.action.s2.action', leaf, 's2.c0'))],
      'p.s0.action': [inChild('p.s0.action.s2.action', leaf, 's2.c0')],
      'p.s0.action.s2.action': [leaf],
    };
    const openOf = async (id: string): Promise<InputRequest[] | null> => open[id] ?? null;
    expect(await replyRoute('p.s0.action.s2.action', openOf)).toEqual({ runId: 'p', resultId: 's0.c0' });
    expect(await replyRoute('p.s0.action', openOf)).toEqual({ runId: 'p', resultId: 's0.c0' });
    expect(await replyRoute('p', openOf)).toBeNull();
    // A parent that waits on nothing (the child finished, or runs on its own): the child is answered as itself.
    expect(await replyRoute('q.s0.action', openOf)).toBeNull();
  });
});
