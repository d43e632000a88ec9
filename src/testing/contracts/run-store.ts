/**
 * The {@link RunStore} contract suite: what every store must do for `run` and `resume` to keep
 * their promises — logs read back equal and in order, runs kept apart whatever their ids, and,
 * for stores with `acquire`, one driver per run, and, for stores with `inputRequest`/`input`,
 * human input written and read back like any record, so crafted logs imported into it are
 * settled or refused as on any store, and, for stores with `callResult`, the outcome of each call
 * of a step with several, and, for stores with `resumed`, the marks drivers leave where they took
 * a run over. Web APIs only, so one suite serves a store in Node, workerd and a browser. The log
 * cases are here; the human-input cases are `run-store-input.ts`, the calls cases
 * `run-store-calls.ts`, the marks `run-store-resumed.ts`, the lease cases `run-store-lease.ts`,
 * the crafted logs `forged-logs.ts`.
 * @module
 */
import { decodeLog, readRunLog } from '../../core/index.ts';
import { checkOptionKeys, readRunLogLines } from '../../core/internal-entry.ts';
import type {
  ActionIntentRecord,
  IntentRecord,
  LogRecord,
  RunStartedRecord,
  RunStore,
  StepWriteRecord,
} from '../../core/index.ts';
import type { OptionKeys } from '../../core/internal-entry.ts';
import { check, equal } from './check.ts';
import type { ContractCase, ContractSuite } from './check.ts';
import { forgedLogCases } from './forged-logs.ts';
import { actionIntent, modelIntent, modelResult, started, stepRecord, stepWrite, writeFullRun } from './records.ts';
import { callResultCases } from './run-store-calls.ts';
import { inputCases } from './run-store-input.ts';
import { leaseCases } from './run-store-lease.ts';
import { resumedCases } from './run-store-resumed.ts';

/** Options of {@link runStoreContract}. */
export type RunStoreContractOptions = {
  /** Names the suite (`"RunStore contract: <name>"`). */
  readonly name: string;
  /** Builds a fresh, empty store; called once per case. */
  readonly makeStore: () => RunStore | Promise<RunStore>;
  /**
   * What a second `acquire` of a held run does: `'refuses'` (rejects with `RunLockedError`),
   * `'waits'` (until release or abort), `'either'` (default: whichever the store does), or
   * `'none'` for a store without `acquire` (the lease cases are left out).
   */
  readonly lease?: 'refuses' | 'waits' | 'either' | 'none';
  /** Size of the large-observation case, in characters (default 200,000). */
  readonly largeObservationChars?: number;
  /**
   * How long a waiting `acquire` is watched, and how soon it must reject once aborted, in ms
   * (default 50 and 2,000).
   */
  readonly waitProbeMs?: number;
  readonly abortWithinMs?: number;
};

const KNOWN: OptionKeys<RunStoreContractOptions> = {
  name: true,
  makeStore: true,
  lease: true,
  largeObservationChars: true,
  waitProbeMs: true,
  abortWithinMs: true,
};

const HOSTILE_IDS = [
  ...['../../etc/passwd', 'a/b', 'a\\b', 'CON', 'nul.txt', '.', '..', '', ' ', 'run id with spaces'],
  ...['ünïcødé-运行-🚀', 'x'.repeat(5000), 'A', 'a', 'a%2Fb', 'a:b?c*d|e<f>g"h'],
];

type Make = () => Promise<RunStore>;

function logCases(make: Make): ContractCase[] {
  return [
    {
      name: 'returns an empty log for a run that was never written',
      run: async () => equal(await (await make()).readLog('never-written'), [], 'readLog of an unwritten run'),
    },
    {
      name: 'returns every record of a run in write order, equal to what was written',
      run: async () => {
        const store = await make();
        const written = await writeFullRun(store, 'run-1');
        equal(await store.readLog('run-1'), written, 'readLog after a full run');
      },
    },
    {
      name: 'gives with readLogLines the log readLog gives, line for record (stores with readLogLines)',
      run: async () => {
        const store = await make();
        const { readLogLines } = store;
        if (readLogLines === undefined) return;
        check(typeof readLogLines === 'function', `the store's readLogLines is a ${typeof readLogLines}, not a method`);
        equal((await readLogLines.call(store, 'never-written')).lines, [], 'readLogLines of an unwritten run');
        const written = await writeFullRun(store, 'run-1');
        const { lines, source } = await readLogLines.call(store, 'run-1');
        check(typeof source === 'string', 'readLogLines names no source');
        equal(decodeLog(lines).records, written, 'the lines of a full run, decoded');
        equal(readRunLogLines(lines, source).view, readRunLog(written), 'the view read from the lines');
      },
    },
    {
      name: 'keeps runs apart when their writes interleave',
      run: async () => {
        const store = await make();
        await Promise.all([writeFullRun(store, 'left'), writeFullRun(store, 'right')]);
        const left = await store.readLog('left');
        const right = await store.readLog('right');
        const kinds = ['run_started', 'intent', 'result', 'intent', 'step', 'run_ended'];
        equal(
          left.map((r) => r.kind),
          kinds,
          'record kinds of the left run',
        );
        equal((left[0] as RunStartedRecord).runId, 'left', 'runId of the left run');
        equal((right[0] as RunStartedRecord).runId, 'right', 'runId of the right run');
      },
    },
    {
      name: 'keeps the action result and the step record together in one step record',
      run: async () => {
        const store = await make();
        await store.runStarted('r', started('r'));
        await store.step('r', stepWrite(0, 'observed'));
        const step = (await store.readLog('r'))[1] as StepWriteRecord | undefined;
        equal(step?.kind, 'step', 'kind of the second record');
        equal(step?.step.observation, 'observed', 'the step record observation');
        equal(step?.actionResult?.outcome.observation, 'observed', 'the action result observation');
      },
    },
    {
      name: 'stores a step without an action result (final answers and invalid decisions)',
      run: async () => {
        const store = await make();
        const step = { ...stepRecord(0), decision: 'final', finalAnswer: '42', actionRepr: null } as const;
        const final = { ...step, observation: null, actionStatus: null };
        const rec: StepWriteRecord = { kind: 'step', v: started('r').v, step: final, actionResult: null };
        await store.step('r', rec);
        equal(await store.readLog('r'), [rec], 'readLog after one step write');
      },
    },
  ];
}

function contentCases(make: Make, largeObservationChars: number): ContractCase[] {
  return [
    {
      name: "gives hostile and unusual run ids their own logs, never another run's",
      run: async () => {
        const store = await make();
        for (const [i, id] of HOSTILE_IDS.entries()) {
          await store.runStarted(id, { ...started(id), snapshotHash: `h${i}` });
        }
        for (const [i, id] of HOSTILE_IDS.entries()) {
          const log = await store.readLog(id);
          const what = `the log of run id ${JSON.stringify(id.slice(0, 40))}`;
          equal(log.length, 1, `${what} has one record`);
          equal((log[0] as RunStartedRecord).snapshotHash, `h${i}`, `${what} holds its own record`);
        }
      },
    },
    {
      name: 'round-trips text that needs escaping: newlines, quotes, unicode, control characters',
      run: async () => {
        const store = await make();
        const text = 'line1\nline2\r\n"quoted" \\ \u0000 \u2028 tab\t 运行 🚀';
        await store.step('r', stepWrite(0, text));
        equal(((await store.readLog('r'))[0] as StepWriteRecord).step.observation, text, 'the observation read back');
      },
    },
    {
      name: 'stores a large observation whole',
      run: async () => {
        const store = await make();
        const big = 'abcdefghij'.repeat(Math.ceil(largeObservationChars / 10)).slice(0, largeObservationChars);
        await store.step('r', stepWrite(0, big));
        const observation = ((await store.readLog('r'))[0] as StepWriteRecord).step.observation;
        equal(observation?.length, largeObservationChars, 'length of the observation read back');
        check(observation === big, 'the large observation read back differs from what was written');
      },
    },
    {
      name: 'keeps unknown extra fields of a record (additive schema changes within a major)',
      run: async () => {
        const store = await make();
        const rec = { ...started('r'), addedLater: { x: 1 } } as RunStartedRecord;
        await store.runStarted('r', rec);
        equal((await store.readLog('r'))[0], rec, 'the record read back');
      },
    },
  ];
}

function appendCases(make: Make): ContractCase[] {
  return [
    {
      name: 'is not changed by a caller mutating what readLog returned',
      run: async () => {
        const store = await make();
        await store.runStarted('r', started('r'));
        const first = (await store.readLog('r')) as unknown as Array<Record<string, unknown>>;
        try {
          (first[0] as Record<string, unknown>)['runId'] = 'mutated';
        } catch {
          // Frozen records are fine too: the point is that the store's copy stays as written.
        }
        equal(((await store.readLog('r'))[0] as RunStartedRecord).runId, 'r', 'runId read again');
      },
    },
    {
      name: 'appends after a read, continuing the same log',
      run: async () => {
        const store = await make();
        await store.runStarted('r', started('r'));
        await store.readLog('r');
        await store.intent('r', modelIntent(0));
        equal(
          (await store.readLog('r')).map((x) => x.kind),
          ['run_started', 'intent'],
          'record kinds',
        );
      },
    },
    {
      name: 'keeps write order across many records',
      run: async () => {
        const store = await make();
        await store.runStarted('r', started('r'));
        for (let i = 0; i < 50; i++) {
          await store.intent('r', modelIntent(i));
          await store.result('r', `s${i}.model`, modelResult(i));
        }
        const log = await store.readLog('r');
        equal(log.length, 101, 'number of records');
        const steps = log
          .slice(1)
          .filter((x) => x.kind === 'intent')
          .map((x) => (x as IntentRecord).stepIndex);
        equal(
          steps,
          Array.from({ length: 50 }, (_, i) => i),
          'intent step indexes in order',
        );
      },
    },
    {
      name:
        'writes a model result and its action intent as one write, read back in order between the records ' +
        'around it (stores with resultAndIntent)',
      run: async () => {
        const store = await make();
        if (!store.resultAndIntent) return;
        const written: LogRecord[] = [started('r'), modelIntent(0), modelResult(0), actionIntent(0), stepWrite(0)];
        await store.runStarted('r', started('r'));
        await store.intent('r', modelIntent(0));
        await store.resultAndIntent('r', modelResult(0), actionIntent(0) as ActionIntentRecord);
        await store.step('r', stepWrite(0));
        equal(await store.readLog('r'), written, 'the log');
      },
    },
  ];
}

/**
 * The cases every {@link RunStore} must pass. Each case builds its own store with `makeStore`.
 *
 * @example
 * // my-store.test.ts (vitest; jest and node:test work the same way)
 * import { describe, it } from 'vitest';
 * import { runStoreContract } from 'polyloop/testing';
 * const suite = runStoreContract({ name: 'MyStore', makeStore: () => new MyStore(), lease: 'none' });
 * describe(suite.name, () => { for (const c of suite.cases) it(c.name, c.run); });
 */
export function runStoreContract(options: RunStoreContractOptions): ContractSuite {
  checkOptionKeys(options, KNOWN, 'runStoreContract');
  const make: Make = async () => options.makeStore();
  const lease = options.lease ?? 'either';
  const cases = [
    ...logCases(make),
    ...contentCases(make, options.largeObservationChars ?? 200_000),
    ...appendCases(make),
    ...inputCases(make),
    ...callResultCases(make),
    ...resumedCases(make),
    ...forgedLogCases(make),
  ];
  if (lease !== 'none') {
    const probeMs = options.waitProbeMs ?? 50;
    cases.push(...leaseCases(make, { mode: lease, probeMs, abortMs: options.abortWithinMs ?? 2000 }));
  }
  return { name: `RunStore contract: ${options.name}`, cases };
}
