/**
 * The equivalence law in real Chromium over IndexedDB: the demo agent of examples/web, "crashed"
 * at every write point (the write lost, or landed but unacknowledged), then resumed by a new
 * store instance as a reloaded page would, ends with the trajectory of an uninterrupted run.
 * The crash points come from a counting run; every lookup of the uninterrupted run ran, and
 * (the tool being `safe`) at most the one in flight at the crash ran twice.
 */
import { describe, expect, it } from 'vitest';
import { isPolyLoopError, resume, run } from '../../src/core/index.ts';
import type { RunStore, StepRecord } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { collectingSink, faultyStore } from '../../src/testing/index.ts';
import { demoAgent, demoRequest } from '../../examples/web/agent.ts';
import { freshDbName } from './idb-store.cases.ts';

const PACE = { thinkMs: 0, toolMs: 0 };

const stripTimes = (steps: readonly StepRecord[]): unknown[] => steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);

/** Drive the demo run; `executed` collects the city of every real tool execution (its side effects). */
async function drive(store: RunStore, mode: 'run' | 'resume', executed: string[] = []): Promise<unknown[]> {
  const request = demoRequest('r', PACE, (city) => executed.push(city));
  const result = await (mode === 'run' ? run : resume)(demoAgent(store, collectingSink(), PACE), request);
  return stripTimes(result.trajectory);
}

describe('the web demo agent over IndexedDB in Chromium', () => {
  it.each([false, true])('resumes from a crash at every one of its writes to the uninterrupted trajectory (write lands before the crash: %s)', async (landsBeforeThrow) => {
    // The baseline is a counting run: its write count is every crash point there is.
    const baselineExecuted: string[] = [];
    const counting = faultyStore(new IndexedDBStore({ dbName: freshDbName('law') }), { crashAfterWrites: Number.POSITIVE_INFINITY });
    const baseline = await drive(counting, 'run', baselineExecuted);
    expect(baseline).toHaveLength(6);
    const writes = counting.writes.length;
    expect(counting.writes.map((w) => w.method)).toEqual(['runStarted', ...Array<string[]>(5).fill(['intent', 'result', 'intent', 'step']).flat(), 'intent', 'result', 'step', 'runEnded']);
    for (let k = 0; k < writes; k++) {
      const where = `crash after ${k} writes`;
      const dbName = freshDbName('law');
      const executed: string[] = [];
      const crashing = faultyStore(new IndexedDBStore({ dbName }), { crashAfterWrites: k, landsBeforeThrow });
      const err = await drive(crashing, 'run', executed).then(() => null, (e: unknown) => e);
      expect(isPolyLoopError(err, 'store_error'), where).toBe(true);
      const reopened = new IndexedDBStore({ dbName });
      const mode = (await reopened.readLog('r')).length === 0 ? 'run' : 'resume';
      expect(await drive(reopened, mode, executed), where).toEqual(baseline);
      await reopened.close();
      // The lookup is safe to repeat, so it may run again — but only the one that was in flight.
      const extra = [...executed];
      for (const city of baselineExecuted) {
        const i = extra.indexOf(city);
        expect(i, `${where}: the lookup for ${city} never ran`).not.toBe(-1);
        extra.splice(i, 1);
      }
      expect(extra.length, `${where}: repeated lookups ${JSON.stringify(extra)}`).toBeLessThanOrEqual(1);
    }
  });
});
