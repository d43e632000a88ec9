/**
 * Property tests of the run log's round trip (docs/design/run-log.md, the lean form): for any
 * replies, arguments and observations, a run written through a store is read back as the very
 * records the loop wrote, exports and imports to the same bytes, shows the same steps to the view
 * and to a resume, and a crash + resume shows the model byte-identical messages.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportRun, importRun, InMemoryStore, readRunLog, resume } from '../../../src/core/index.ts';
import type { LogRecord, ModelCall, RunStore } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { drive, firstDifference, planHarness, recording, runPlan } from './log-arbitraries.ts';
import { timeless } from './fixtures.ts';

let dir = '';
let made = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'polyloop-fuzz-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Equal field for field, in the same key order, and as JSON text (what a wire or a file carries). */
function sameRecords(got: readonly LogRecord[], want: readonly LogRecord[], where: string): void {
  expect(got.length, where).toBe(want.length);
  expect(
    got.map((r) => JSON.stringify(r)),
    where,
  ).toEqual(want.map((r) => JSON.stringify(r)));
  expect(firstDifference(got, want), where).toBeNull();
}

const messagesOf = (call: ModelCall): string =>
  JSON.stringify({ messages: call.messages, tools: call.tools, binding: call.binding, resultId: call.resultId });

/** What a log holds that the property is meant to reach: record kinds, step decisions and statuses, odd text. */
function featuresOf(recs: readonly LogRecord[], ndjson: string): string[] {
  const out = recs.map((r) => (r.kind === 'intent' ? `intent:${r.intent}` : r.kind));
  for (const r of recs)
    if (r.kind === 'step') out.push(`decision:${r.step.decision}`, `status:${String(r.step.actionStatus)}`);
  if (/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/.test(ndjson)) out.push('lone surrogate');
  if (ndjson.split('\n').some((line) => line.length > 50_000)) out.push('long line');
  if (ndjson.includes('\u2028')) out.push('U+2028');
  if (ndjson.includes('__proto__')) out.push('__proto__');
  return out;
}

const REACHED = [
  'input_request',
  'input',
  'resumed',
  'call_result',
  'intent:actions',
  'decision:invalid',
  'decision:model_error',
  'status:executed',
  'status:not_executed',
  'status:env_error',
  'status:denied',
  'lone surrogate',
  'long line',
  'U+2028',
  '__proto__',
];

describe('a run log written through a store', () => {
  it('reads back as the records the loop wrote, exports and imports to the same bytes, and shows the view and a resume the same steps', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(runPlan, fc.constantFrom('memory', 'file'), async (plan, kind) => {
        const inner: RunStore =
          kind === 'memory' ? new InMemoryStore() : new FileStore({ dir: join(dir, `s${made++}`) });
        const { store, written } = recording(inner);
        const h = planHarness(plan, store);
        const result = await drive(plan, h, inner);

        const read = await inner.readLog('fuzz-1');
        sameRecords(read, written, 'readLog');

        const ndjson = await exportRun(inner, 'fuzz-1');
        for (const f of featuresOf(read, ndjson)) seen.add(f);
        const copy = new InMemoryStore();
        await importRun(copy, 'fuzz-1', ndjson);
        sameRecords(await copy.readLog('fuzz-1'), written, 'imported');
        expect(await exportRun(copy, 'fuzz-1')).toBe(ndjson);

        const view = readRunLog(read);
        expect(view.state).toBe('ended');
        expect(firstDifference(view.trajectory, result.trajectory)).toBeNull();

        const again = await resume(planHarness(plan, inner).agent, h.request);
        expect(firstDifference(again.trajectory, result.trajectory)).toBeNull();
        sameRecords(await inner.readLog('fuzz-1'), written, 'after resume of the ended run');
      }),
      { seed: 92_001, numRuns: 40 },
    );
    expect(REACHED.filter((f) => !seen.has(f))).toEqual([]);
  });
});

describe('a run that crashes at any write and is resumed', () => {
  it('ends with the uninterrupted trajectory, its log read back as written, and the model shown byte-identical messages', async () => {
    let settledRuns = 0;
    await fc.assert(
      fc.asyncProperty(
        runPlan,
        fc.nat(),
        fc.boolean(),
        fc.constantFrom('memory', 'file'),
        async (plan, at, landsBeforeThrow, kind) => {
          const counting = faultyStore(new InMemoryStore(), { crashAfterWrites: Number.POSITIVE_INFINITY });
          const ref = planHarness(plan, counting);
          const refResult = await drive(plan, ref, counting);
          const expected = ref.model.calls.map(messagesOf);

          const inner: RunStore =
            kind === 'memory' ? new InMemoryStore() : new FileStore({ dir: join(dir, `s${made++}`) });
          const { store, written } = recording(inner);
          const k = at % counting.writes.length;
          const crashing = faultyStore(store, { crashAfterWrites: k, landsBeforeThrow });
          const first = planHarness(plan, crashing);
          await expect(drive(plan, first, crashing)).rejects.toThrow();
          const second = planHarness(plan, store);
          const result = await drive(plan, second, store);

          const where = `crash at write ${k}${landsBeforeThrow ? ' (landed)' : ''}`;
          const read = await inner.readLog('fuzz-1');
          // A settlement other than retry changes what happened (the person's observation, or the
          // end): the law then holds for the log alone.
          const settled = read.some(
            (r) => r.kind === 'input' && (r.reply.kind === 'executed' || r.reply.kind === 'cancel'),
          );
          if (settled) settledRuns++;
          else {
            expect(firstDifference(timeless(result.trajectory), timeless(refResult.trajectory)), where).toBeNull();
            for (const call of [...first.model.calls, ...second.model.calls])
              expect(messagesOf(call), `${where}, model call ${call.callSeq}`).toBe(expected[call.callSeq]);
          }
          sameRecords(read, written, where);
          expect(firstDifference(readRunLog(read).trajectory, result.trajectory), where).toBeNull();
          const copy = new InMemoryStore();
          await importRun(copy, 'fuzz-1', await exportRun(inner, 'fuzz-1'));
          sameRecords(await copy.readLog('fuzz-1'), written, `${where}, imported`);
        },
      ),
      { seed: 92_002, numRuns: 50 },
    );
    expect(settledRuns).toBeGreaterThan(0);
  });
});
