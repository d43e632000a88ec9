/**
 * The store a run object hands its factory for sub-agents (src/platform-workers/child-run-store.ts):
 * which run ids it reaches, and how it fails without the objects it writes to. Its writes through
 * real objects are proven in workerd (test/workers/sub-agents.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { RunLockedError, StoreError } from '../../../src/core/index.ts';
import { ChildRunStore, childLogRefusal, parentRunIdOf } from '../../../src/platform-workers/child-run-store.ts';
import type { ChildLogRpc, ChildObjects } from '../../../src/platform-workers/child-run-store.ts';

/** A namespace whose objects answer every read with the lines given, recording which object was asked. */
function objects(lines: readonly string[]): ChildObjects & { readonly asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    idFromName: (name: string) => name,
    get: (id: string) =>
      ({
        childLogLines: async (parentRunId: string, runId: string) => {
          asked.push(`${String(id)} <- ${parentRunId}: ${runId}`);
          return lines;
        },
        appendChildLog: async () => null,
      }) satisfies ChildLogRpc,
  };
}

describe('parentRunIdOf', () => {
  it('reads the parent off a child run id, for one-call and several-call steps and nested children', () => {
    expect(parentRunIdOf('p.s3.action')).toBe('p');
    expect(parentRunIdOf('p.s3.a1')).toBe('p');
    expect(parentRunIdOf('order-7.s0.action.s12.a0')).toBe('order-7.s0.action');
    expect(parentRunIdOf('p')).toBeNull();
    expect(parentRunIdOf('s0.action')).toBeNull();
    expect(parentRunIdOf('p.s3.input')).toBeNull();
  });
});

describe('ChildRunStore', () => {
  it("reads a child's and a grandchild's log from each one's own object, naming each one's parent", async () => {
    const ns = objects([]);
    const store = new ChildRunStore('p', ns);
    expect(await store.readLog('p.s0.action')).toEqual([]);
    expect(await store.readLog('p.s0.action.s1.a2')).toEqual([]);
    expect(ns.asked).toEqual(['p.s0.action <- p: p.s0.action', 'p.s0.action.s1.a2 <- p.s0.action: p.s0.action.s1.a2']);
  });

  it('refuses a run that is not below its own run with RunLockedError, asking no object', async () => {
    const ns = objects([]);
    const store = new ChildRunStore('p', ns);
    for (const runId of ['p', 'q.s0.action', 'pp.s0.action', 'p.s0.input'])
      await expect(store.readLog(runId)).rejects.toBeInstanceOf(RunLockedError);
    expect(ns.asked).toEqual([]);
  });

  it('fails with a StoreError naming the runs option when the run object was given no namespace', async () => {
    const store = new ChildRunStore('p', undefined);
    const read = store.readLog('p.s0.action');
    await expect(read).rejects.toBeInstanceOf(StoreError);
    await expect(read).rejects.toThrow(/give createRunObject the runs option/);
  });

  it('refuses a log whose last committed line is not JSON as corrupt, not as a torn write', async () => {
    const store = new ChildRunStore('p', objects(['{"kind":']));
    await expect(store.readLog('p.s0.action')).rejects.toMatchObject({ code: 'corrupt_log' });
  });
});

describe('childLogRefusal', () => {
  it("lets only the child's own parent write or read it, and says why not otherwise", () => {
    const row = { runId: 'p.s0.action', parentRunId: 'p' };
    expect(childLogRefusal(row, 'p', 'p.s0.action')).toBeNull();
    expect(childLogRefusal(row, 'p', 'p.s1.action')).toBe('its object holds run "p.s0.action"');
    expect(childLogRefusal({ ...row, parentRunId: null }, 'p', 'p.s0.action')).toBe(
      'run "p.s0.action" was started on its own (POST /runs), not by run "p"',
    );
    expect(childLogRefusal({ ...row, parentRunId: 'x' }, 'p', 'p.s0.action')).toBe(
      'run "p.s0.action" is a sub-agent of run "x", not of run "p"',
    );
  });
});
