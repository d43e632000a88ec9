/**
 * The shared RunStore contract suite. Web APIs only (no Buffer, no node:), so every store's
 * runner — node, real Chromium, workerd — runs the same cases. Each case builds a fresh store.
 */
import { describe, expect, it } from 'vitest';
import { isPolyLoopError, RECORD_VERSION } from '../../src/core/index.ts';
import type {
  IntentRecord,
  LogRecord,
  ResultRecord,
  RunEndedRecord,
  RunStartedRecord,
  RunStore,
  StepRecord,
  StepWriteRecord,
} from '../../src/core/index.ts';

export type StoreFactory = () => RunStore | Promise<RunStore>;

export type ContractOptions = {
  /** Stores that implement `acquire` and refuse a second driver (rather than wait). */
  readonly lease?: 'refuses' | 'waits' | 'none';
  /** Size of the large-observation case, in characters (default 200,000). */
  readonly largeObservationChars?: number;
};

const v = RECORD_VERSION;

export function started(runId: string): RunStartedRecord {
  return { kind: 'run_started', v, runId, snapshot: { model: { model: 'm' }, budget: { maxSteps: 3 } }, snapshotHash: 'ab'.repeat(32), startedAt: '2026-01-01T00:00:00.000Z' };
}

export function modelIntent(stepIndex: number): IntentRecord {
  return { kind: 'intent', v, intent: 'model_call', stepIndex, callSeq: stepIndex, resultId: `s${stepIndex}.model`, replayPolicy: 'safe' };
}

export function actionIntent(stepIndex: number): IntentRecord {
  return {
    kind: 'intent',
    v,
    intent: 'action',
    stepIndex,
    resultId: `s${stepIndex}.action`,
    replayPolicy: 'never',
    decision: { kind: 'action', action: { kind: 'tool_call', name: 'echo', arguments: { text: 'hi' } }, trajectoryRepr: 'echo(hi)', historyText: 'call echo' },
  };
}

export function modelResult(stepIndex: number, text = 'reply'): ResultRecord {
  return { kind: 'result', v, resultId: `s${stepIndex}.model`, stepIndex, callSeq: stepIndex, reply: { callId: `c${stepIndex}`, text, reasoning: null, toolCalls: [], content: null } };
}

export function stepRecord(stepIndex: number, observation = 'hi'): StepRecord {
  return {
    stepIndex,
    callSeq: stepIndex,
    modelCallId: `c${stepIndex}`,
    modelText: 'reply',
    reasoning: null,
    decision: 'action',
    actionRepr: 'echo(hi)',
    historyText: 'call echo',
    historyContent: null,
    observation,
    observationIsSynthetic: false,
    actionStatus: 'executed',
    envReportedCompletion: false,
    observationTruncatedChars: 0,
    finalAnswer: null,
    explanation: null,
    toolCallId: null,
    toolCompletedRun: false,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:01.000Z',
  };
}

export function stepWrite(stepIndex: number, observation = 'hi'): StepWriteRecord {
  return {
    kind: 'step',
    v,
    step: stepRecord(stepIndex, observation),
    actionResult: { resultId: `s${stepIndex}.action`, outcome: { status: 'executed', observation, observationIsSynthetic: false, envReportedCompletion: false, observationTruncatedChars: 0 } },
  };
}

export function ended(steps: number): RunEndedRecord {
  return { kind: 'run_ended', v, stopReason: 'final_answer', finalAnswer: 'done', steps, validActions: steps, eventDeliveryFailures: 0, endedAt: '2026-01-01T00:00:02.000Z' };
}

/** Write a full one-step run through every store method, in protocol order. */
export async function writeFullRun(store: RunStore, runId: string): Promise<LogRecord[]> {
  const recs: LogRecord[] = [started(runId), modelIntent(0), modelResult(0), actionIntent(0), stepWrite(0), ended(1)];
  await store.runStarted(runId, recs[0] as RunStartedRecord);
  await store.intent(runId, recs[1] as IntentRecord);
  await store.result(runId, 's0.model', recs[2] as ResultRecord);
  await store.intent(runId, recs[3] as IntentRecord);
  await store.step(runId, recs[4] as StepWriteRecord);
  await store.runEnded(runId, recs[5] as RunEndedRecord);
  return recs;
}

const HOSTILE_IDS = ['../../etc/passwd', 'a/b', 'a\\b', 'CON', 'nul.txt', '.', '..', '', ' ', 'run id with spaces', 'ünïcødé-运行-🚀', 'x'.repeat(5000), 'A', 'a', 'a%2Fb', 'a:b?c*d|e<f>g"h'];

export function runStoreContract(name: string, makeStore: StoreFactory, options: ContractOptions = {}): void {
  describe(`RunStore contract: ${name}`, () => {
    it('returns an empty log for a run that was never written', async () => {
      const store = await makeStore();
      expect(await store.readLog('never-written')).toEqual([]);
    });

    it('returns every record of a run in write order, equal to what was written', async () => {
      const store = await makeStore();
      const written = await writeFullRun(store, 'run-1');
      expect(await store.readLog('run-1')).toEqual(written);
    });

    it('keeps runs apart when their writes interleave', async () => {
      const store = await makeStore();
      await Promise.all([writeFullRun(store, 'left'), writeFullRun(store, 'right')]);
      const left = await store.readLog('left');
      const right = await store.readLog('right');
      expect(left.map((r) => r.kind)).toEqual(['run_started', 'intent', 'result', 'intent', 'step', 'run_ended']);
      expect((left[0] as RunStartedRecord).runId).toBe('left');
      expect((right[0] as RunStartedRecord).runId).toBe('right');
    });

    it('keeps the action result and the step record together in one step record', async () => {
      const store = await makeStore();
      await store.runStarted('r', started('r'));
      await store.step('r', stepWrite(0, 'observed'));
      const log = await store.readLog('r');
      const step = log[1] as StepWriteRecord;
      expect(step.kind).toBe('step');
      expect(step.step.observation).toBe('observed');
      expect(step.actionResult?.outcome.observation).toBe('observed');
    });

    it('stores a step without an action result (final answers and invalid decisions)', async () => {
      const store = await makeStore();
      const rec: StepWriteRecord = { kind: 'step', v, step: { ...stepRecord(0), decision: 'final', finalAnswer: '42', actionRepr: null, observation: null, actionStatus: null }, actionResult: null };
      await store.step('r', rec);
      expect(await store.readLog('r')).toEqual([rec]);
    });

    it('gives hostile and unusual run ids their own logs, never another run\'s', async () => {
      const store = await makeStore();
      for (const [i, id] of HOSTILE_IDS.entries()) await store.runStarted(id, { ...started(id), snapshotHash: `h${i}` });
      for (const [i, id] of HOSTILE_IDS.entries()) {
        const log = await store.readLog(id);
        expect(log, `run id ${JSON.stringify(id.slice(0, 40))}`).toHaveLength(1);
        expect((log[0] as RunStartedRecord).snapshotHash).toBe(`h${i}`);
      }
    });

    it('round-trips text that needs escaping: newlines, quotes, unicode, control characters', async () => {
      const store = await makeStore();
      const text = 'line1\nline2\r\n"quoted" \\ \u0000 \u2028 tab\t 运行 🚀';
      await store.step('r', stepWrite(0, text));
      const step = (await store.readLog('r'))[0] as StepWriteRecord;
      expect(step.step.observation).toBe(text);
    });

    it('stores a large observation whole', async () => {
      const store = await makeStore();
      const size = options.largeObservationChars ?? 200_000;
      const big = 'abcdefghij'.repeat(Math.ceil(size / 10)).slice(0, size);
      await store.step('r', stepWrite(0, big));
      const step = (await store.readLog('r'))[0] as StepWriteRecord;
      expect(step.step.observation?.length).toBe(size);
      expect(step.step.observation).toBe(big);
    });

    it('keeps unknown extra fields of a record (additive schema changes within a major)', async () => {
      const store = await makeStore();
      const rec = { ...started('r'), addedLater: { x: 1 } } as RunStartedRecord;
      await store.runStarted('r', rec);
      expect((await store.readLog('r'))[0]).toEqual(rec);
    });

    it('is not changed by a caller mutating what readLog returned', async () => {
      const store = await makeStore();
      await store.runStarted('r', started('r'));
      const first = (await store.readLog('r')) as unknown as Array<Record<string, unknown>>;
      try {
        (first[0] as Record<string, unknown>)['runId'] = 'mutated';
      } catch {
        // frozen records are fine too
      }
      expect(((await store.readLog('r'))[0] as RunStartedRecord).runId).toBe('r');
    });

    it('appends after a read, continuing the same log', async () => {
      const store = await makeStore();
      await store.runStarted('r', started('r'));
      await store.readLog('r');
      await store.intent('r', modelIntent(0));
      expect((await store.readLog('r')).map((x) => x.kind)).toEqual(['run_started', 'intent']);
    });

    it('keeps write order across many records', async () => {
      const store = await makeStore();
      await store.runStarted('r', started('r'));
      for (let i = 0; i < 50; i++) {
        await store.intent('r', modelIntent(i));
        await store.result('r', `s${i}.model`, modelResult(i));
      }
      const log = await store.readLog('r');
      expect(log).toHaveLength(101);
      const steps = log.slice(1).filter((x) => x.kind === 'intent').map((x) => (x as IntentRecord).stepIndex);
      expect(steps).toEqual(Array.from({ length: 50 }, (_, i) => i));
    });

    if (options.lease === 'refuses' || options.lease === 'waits') {
      it('lets exactly one driver hold a run, and frees it on release', async () => {
        const store = await makeStore();
        if (!store.acquire) throw new Error('store declares a lease but has no acquire()');
        const release = await store.acquire('leased', {});
        if (options.lease === 'refuses') {
          const second = await store.acquire('leased', {}).then(() => null, (e: unknown) => e);
          expect(isPolyLoopError(second, 'run_locked')).toBe(true);
        } else {
          const ac = new AbortController();
          const waiting = store.acquire('leased', { signal: ac.signal });
          let got = false;
          void waiting.then(() => (got = true), () => undefined);
          await new Promise((r) => setTimeout(r, 50));
          expect(got).toBe(false);
          ac.abort(new Error('gave up'));
          await expect(waiting).rejects.toThrow('gave up');
        }
        const other = await store.acquire('other-run', {});
        await other();
        await release();
        await release(); // idempotent
        const again = await store.acquire('leased', {});
        await again();
      });

      it('has a release that, called again later, never frees a lease another driver took since', async () => {
        const store = await makeStore();
        if (!store.acquire) throw new Error('store declares a lease but has no acquire()');
        const release = await store.acquire('handed-on', {});
        await release();
        const next = await store.acquire('handed-on', {});
        await release();
        // The new holder still holds it: a third driver is refused, or waits until it gives up.
        const ac = new AbortController();
        const third = store.acquire('handed-on', { signal: ac.signal });
        if (options.lease === 'waits') setTimeout(() => ac.abort(new Error('still held')), 50);
        const err = await third.then(async (r) => (await r(), null), (e: unknown) => e);
        if (options.lease === 'refuses') expect(isPolyLoopError(err, 'run_locked')).toBe(true);
        else expect((err as Error).message).toBe('still held');
        await next();
      });

      it('does not take the lease to read a log', async () => {
        const store = await makeStore();
        if (!store.acquire) throw new Error('store declares a lease but has no acquire()');
        const release = await store.acquire('r', {});
        await store.runStarted('r', started('r'));
        expect(await store.readLog('r')).toHaveLength(1);
        await release();
      });
    }
  });
}
