/**
 * Section 3: resume of a run crashed at step N — time until the model is called again, next to
 * the floor of reading and parsing the same JSONL log — and the log's size.
 * @module
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeLog, InMemoryStore, resume, run } from '../src/core/index.ts';
import type { LogRecord, RunStore } from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { faultyStore } from '../src/testing/index.ts';
import { benchAgent, benchRequest } from './fixtures.ts';
import type { CallHook } from './fixtures.ts';
import { freshId, row, samplePair } from './kernel.ts';
import type { Plan, Row } from './kernel.ts';

/** Replay decoded records into a store through its write methods (to copy a crashed log). */
export async function replay(store: RunStore, runId: string, records: readonly LogRecord[]): Promise<void> {
  for (const rec of records) {
    if (rec.kind === 'run_started') await store.runStarted(runId, rec);
    else if (rec.kind === 'intent') await store.intent(runId, rec);
    else if (rec.kind === 'result') await store.result(runId, rec.resultId, rec);
    else if (rec.kind === 'step') await store.step(runId, rec);
    else if (rec.kind === 'run_ended') await store.runEnded(runId, rec);
    else throw new Error(`the bench logs hold no ${rec.kind} records`);
  }
}

/**
 * A run crashed at step `n`: its model-call intent landed, then the process "died". Writes:
 * `run_started`, then three per action step (model intent, result + action intent, step;
 * decision 0040), then step `n`'s model intent.
 */
export async function crashedLog(n: number): Promise<readonly LogRecord[]> {
  const inner = new InMemoryStore();
  const store = faultyStore(inner, { crashAfterWrites: 1 + 3 * n + 1 });
  await run(benchAgent(store, n + 2), benchRequest('crashed', n + 2)).then(
    () => {
      throw new Error('the crashing run did not crash');
    },
    () => undefined,
  );
  return inner.readLog('crashed');
}

/**
 * Time from calling `resume` on a run crashed at step `n` until the model is called for step
 * `n` (the re-issued call: `modelReplayPolicy: 'safe'`). `prepare` builds a fresh copy of the
 * crashed log for each sample, outside the timing.
 */
async function resumeMs(prepare: () => Promise<RunStore>, n: number): Promise<number> {
  const store = await prepare();
  let called = -1;
  const hook: CallHook = (call) => {
    if (called < 0 && call.callSeq === n) called = performance.now();
  };
  const agent = benchAgent(store, n + 2, hook);
  const t0 = performance.now();
  const result = await resume(agent, benchRequest('crashed', n + 2));
  if (called < 0 || result.stopReason !== 'final_answer')
    throw new Error(`resume did not re-issue call ${n} (${result.stopReason})`);
  return called - t0;
}

/** The floor of a resume: `JSON.parse` every line of the log (read from `path` first, if given). */
export async function parseFloorMs(lines: readonly string[] | null, path: string | null): Promise<number> {
  const t0 = performance.now();
  const all = path ? (await readFile(path, 'utf8')).split('\n') : (lines ?? []);
  let count = 0;
  for (const line of all) if (line !== '') count += JSON.parse(line) === null ? 0 : 1;
  if (count === 0) throw new Error('empty floor log');
  return performance.now() - t0;
}

/** Section 3: resume of a crashed run on InMemoryStore and FileStore; log size in bytes. */
export async function resumeTimes(plan: Plan, sizes: readonly number[]): Promise<Row[]> {
  const rows: Row[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-resume-'));
  try {
    for (const n of sizes) {
      const records = await crashedLog(n);
      // The JSONL a FileStore writes (the lean form, one record per line), written in one go:
      // replaying 4N fsynced appends would take minutes. readLog below proves FileStore reads it back whole.
      const lines = encodeLog(records).trimEnd().split('\n');
      const fileSource = new FileStore({ dir: join(dir, `source-${n}`) });
      const path = fileSource.logPath('crashed');
      await mkdir(fileSource.dir, { recursive: true });
      await writeFile(path, `${lines.join('\n')}\n`);
      if ((await fileSource.readLog('crashed')).length !== records.length)
        throw new Error('FileStore did not read the crashed log back whole');
      const bytes = (await stat(path)).size;
      const memory = async (): Promise<RunStore> => {
        const s = new InMemoryStore();
        await replay(s, 'crashed', records);
        return s;
      };
      const file = async (): Promise<RunStore> => {
        const d = join(dir, freshId('copy'));
        await mkdir(d);
        const s = new FileStore({ dir: d });
        await writeFile(s.logPath('crashed'), await readFile(path));
        return s;
      };
      const size = `${records.length} records`;
      const at = n.toLocaleString('en-US');
      rows.push(
        row(
          'resume',
          `resume at step ${at}, InMemoryStore`,
          'ms',
          await samplePair(
            () => resumeMs(memory, n),
            () => parseFloorMs(lines, null),
            plan,
          ),
          `${size}; floor: JSON.parse every line`,
        ),
      );
      rows.push(
        row(
          'resume',
          `resume at step ${at}, FileStore`,
          'ms',
          await samplePair(
            () => resumeMs(file, n),
            () => parseFloorMs(null, path),
            plan,
          ),
          `${size}; floor: read the file + JSON.parse every line`,
        ),
      );
      rows.push({
        section: 'resume',
        name: `log size at step ${n.toLocaleString('en-US')}`,
        unit: 'bytes',
        value: bytes,
        floor: null,
        samples: [bytes],
        floorSamples: [],
        note: `${(bytes / n).toFixed(0)} bytes/step`,
      });
    }
    rows.push(resumeGrowth(rows, sizes));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

/** FileStore resume time per step at the largest size ÷ at the one before: ~1 when resume is linear in the log. */
function resumeGrowth(rows: readonly Row[], sizes: readonly number[]): Row {
  const [small, large] = sizes.slice(-2);
  const perStep = (n: number | undefined): Row => {
    const r = rows.find((x) => x.name === `resume at step ${(n ?? 0).toLocaleString('en-US')}, FileStore`);
    if (!r || r.floor === null || n === undefined) throw new Error('resume growth needs two FileStore sizes');
    return { ...r, value: r.value / n, floor: r.floor / n };
  };
  const a = perStep(small);
  const b = perStep(large);
  const floorA = a.floor as number;
  const floorB = b.floor as number;
  const label = (n: number | undefined): string => (n ?? 0).toLocaleString('en-US');
  return {
    section: 'resume',
    name: `growth: FileStore resume ms/step at ${label(large)} ÷ at ${label(small)}`,
    unit: '×',
    value: b.value / a.value,
    floor: floorB / floorA,
    samples: [],
    floorSamples: [],
    note: 'must stay near 1 (no quadratic step in resume)',
  };
}
