/**
 * Browser kill: a page reload leaves the browser (and its IndexedDB backend) running, so it cannot
 * catch a write that was acknowledged before it was durable. Here Debian's Chromium itself is
 * SIGKILLed (its whole process group, storage service included) while a run on IndexedDBStore is
 * under way, relaunched on the same profile, and the page resumes the run on load. The world
 * outside the browser is this Node process: it records every side effect and every acknowledged
 * write, and tells the relaunched page whether a `never` action in flight at the kill happened, so
 * the page answers its settle request and the run still ends with the uninterrupted
 * trajectory. `npm run fuzz:browser-kill` runs many more trials and prints the figures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanUpProfiles, leftoverProcesses, startKillServer } from './kill-harness.ts';
import type { KillServer } from './kill-harness.ts';
import { planDelays, referenceRun, runTrial } from './kill-trials.ts';
import type { Reference, TrialOutcome } from './kill-trials.ts';

const SEED = 20261201;
const PERCENTS = planDelays(4, SEED, 100).map(Math.round);
const PLANNED = [
  'quote({"item":"tea"})',
  'charge({"order":"A-1"})',
  'quote({"item":"cake"})',
  'charge({"order":"A-2"})',
  'quote({"item":"jam"})',
  'charge({"order":"A-3"})',
];
let server: KillServer;
let ref: Reference;

beforeAll(async () => {
  server = await startKillServer();
  ref = await referenceRun(server, 'reference');
}, 90_000);

afterAll(async () => {
  await cleanUpProfiles();
  await server?.close();
});

/** The properties every trial must keep, whatever moment the kill hit: the whole run, each charge exactly once. */
function expectSound(o: TrialOutcome): void {
  expect(o.problems).toEqual([]);
  expect(o.stopReason).toBe('final_answer');
  expect(Object.entries(o.effectCounts).filter(([name]) => name.startsWith('charge('))).toEqual(
    PLANNED.filter((p) => p.startsWith('charge(')).map((p) => [p, 1]),
  );
}

describe('Chromium SIGKILLed mid-run and relaunched on the same profile', () => {
  it('an uninterrupted run charges each order once and answers, with every write counted', () => {
    expect(ref.stopReason).toBe('final_answer');
    expect(ref.effects).toEqual(PLANNED);
    expect(ref.steps).toHaveLength(PLANNED.length + 1);
    // run_started, 7 × (model intent, result, step) and 6 action intents, run_ended.
    expect(ref.writes).toBe(1 + 3 * 7 + 6 + 1);
  });

  it.each(PERCENTS.map((p, i) => [i + 1, p] as const))(
    'killed at a random moment (trial %i, %i percent into the run), the resumed run ends with the uninterrupted trajectory, each never action exactly once and no acknowledged write lost',
    async (i, percent) => {
      const o = await runTrial(server, ref, `random-${i}`, { kind: 'delay', ms: (percent / 100) * ref.durationMs });
      expectSound(o);
      expect(o.settledAs !== null).toBe(o.phase === 'never action in flight');
    },
    60_000,
  );

  it('killed the moment a never action reached the outside world, the relaunched page settles it as executed (from the server) and finishes the uninterrupted trajectory with that charge made once', async () => {
    const o = await runTrial(server, ref, 'never-in-flight', { kind: 'effect', tool: 'charge', nth: 2 });
    expectSound(o);
    expect(o.phase).toBe('never action in flight');
    expect(o).toMatchObject({ inFlightNeverRan: true, settledAs: 'executed' });
  }, 60_000);

  it("killed the moment a never action's intent was durable, before its tool started, the relaunched page settles it as retry and the charge is made once, after the relaunch", async () => {
    const o = await runTrial(server, ref, 'never-not-run', { kind: 'ack', resultId: 's3.action' });
    expectSound(o);
    expect(o.phase).toBe('never action in flight');
    expect(o).toMatchObject({ inFlightNeverRan: false, settledAs: 'retry' });
    expect(
      server
        .of('never-not-run')
        .filter((m) => m.path === '/effect' && m.body['tool'] === 'charge')
        .map((m) => m.launch),
    ).toEqual([1, 2, 2]);
  }, 60_000);

  it('killed the moment a safe action reached the outside world, the relaunch runs it again and finishes the uninterrupted trajectory', async () => {
    const o = await runTrial(server, ref, 'safe-in-flight', { kind: 'effect', tool: 'quote', nth: 2 });
    expectSound(o);
    expect(o.phase).toBe('safe action in flight');
    expect(o.stopReason).toBe('final_answer');
    expect(o.effectCounts['quote({"item":"cake"})']).toBe(2);
  }, 60_000);

  it('leaves no Chromium process running on any profile it made', () => {
    expect(leftoverProcesses()).toEqual([]);
  });
});
