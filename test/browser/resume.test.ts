/**
 * The equivalence law in real Chromium over IndexedDB: the demo agent of examples/web, "crashed"
 * at every write point (the write lost, or landed but unacknowledged), then resumed by a new
 * store instance as a reloaded page would, ends with the trajectory of an uninterrupted run.
 */
import { describe, expect, it } from 'vitest';
import { isPolyLoopError, resume, run } from '../../src/core/index.ts';
import type { RunStore, StepRecord } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { collectingSink, faultyStore } from '../../src/testing/index.ts';
import { demoAgent, demoRequest } from '../../examples/web/agent.ts';
import { freshDbName } from './idb-store.cases.ts';

const PACE = { thinkMs: 0, toolMs: 0 };
const WRITES = 25; // run_started + 5 × 4 (action steps) + 3 (final step) + run_ended

const stripTimes = (steps: readonly StepRecord[]): unknown[] => steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);

async function drive(store: RunStore, mode: 'run' | 'resume'): Promise<unknown[]> {
  const request = demoRequest('r', PACE, () => undefined);
  const result = await (mode === 'run' ? run : resume)(demoAgent(store, collectingSink(), PACE), request);
  return stripTimes(result.trajectory);
}

describe('the web demo agent over IndexedDB in Chromium', () => {
  it.each([false, true])('resumes from a crash at every one of its writes to the uninterrupted trajectory (write lands before the crash: %s)', async (landsBeforeThrow) => {
    const baseline = await drive(new IndexedDBStore({ dbName: freshDbName('law') }), 'run');
    expect(baseline).toHaveLength(6);
    for (let k = 0; k < WRITES; k++) {
      const dbName = freshDbName('law');
      const crashing = faultyStore(new IndexedDBStore({ dbName }), { crashAfterWrites: k, landsBeforeThrow });
      const err = await drive(crashing, 'run').then(() => null, (e: unknown) => e);
      expect(isPolyLoopError(err, 'store_error'), `crash after ${k} writes`).toBe(true);
      const reopened = new IndexedDBStore({ dbName });
      if ((await reopened.readLog('r')).length === 0) {
        expect(await drive(reopened, 'run'), `crash after ${k} writes`).toEqual(baseline);
      } else {
        expect(await drive(reopened, 'resume'), `crash after ${k} writes`).toEqual(baseline);
      }
      await reopened.close();
    }
  });
});
