/**
 * Reading a log from its lines (docs/design/run-log.md#reading-a-log-fast): the view
 * `readRunLogLines` gives, and every refusal, is the one `readRunLog(decodeLog(lines).records)`
 * gives — for logs of every state, for the portable logs of the three runtimes, and for thousands
 * of damaged and forged ones. The common-shape path of the decoder is held to the general reader
 * record by record.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchAgent, benchRequest } from '../../../bench/fixtures.ts';
import { decodeLog, encodeLog, InMemoryStore, resume, run } from '../../../src/core/index.ts';
import type { LogRecord, RunStore } from '../../../src/core/index.ts';
import { readCommon } from '../../../src/core/lean-common.ts';
import { StepContext } from '../../../src/core/lean-records.ts';
import { readRunLogLines } from '../../../src/core/log-lines.ts';
import { decodeGeneral } from '../../../src/core/serialization.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { harness, NATIVE_SCRIPT, nativeInterpreter } from './fixtures.ts';
import { random } from '../../support/random.ts';
import { byLines, general, SOURCE, withReadLogLines } from './log-readings.ts';

const PORTABLE = join(import.meta.dirname, '../../fixtures/portability');

/** What a store hands a reader: a last line that is not JSON is a torn write, dropped. */
function stored(lines: readonly string[]): string[] {
  const out = [...lines];
  const last = out.at(-1);
  if (last !== undefined) {
    try {
      JSON.parse(last);
    } catch {
      out.pop();
    }
  }
  return out;
}

/** The log of a run, as a store holds it. */
async function linesOf(store: RunStore, runId: string): Promise<string[]> {
  return encodeLog(await store.readLog(runId))
    .trimEnd()
    .split('\n');
}

/** Logs of a bench run crashed after each of its first writes: every state a step passes through. */
async function crashedLogs(): Promise<string[][]> {
  const logs: string[][] = [];
  for (let writes = 1; writes <= 16; writes++) {
    const inner = new InMemoryStore();
    await run(benchAgent(faultyStore(inner, { crashAfterWrites: writes }), 6), benchRequest('c', 6)).catch(() => null);
    logs.push(await linesOf(inner, 'c'));
  }
  return logs;
}

/** Logs of whole runs: the bench's (ended, action steps only), a scripted one with final answers. */
async function endedLogs(): Promise<string[][]> {
  const bench = new InMemoryStore();
  await run(benchAgent(bench, 40), benchRequest('b', 40));
  const scripted = harness();
  await run(scripted.agent, scripted.request);
  const native = harness({ script: NATIVE_SCRIPT, interpreter: nativeInterpreter() });
  await run(native.agent, native.request);
  return [await linesOf(bench, 'b'), await linesOf(scripted.store, 'run-1'), await linesOf(native.store, 'run-1')];
}

const portable = (): string[][] =>
  readdirSync(PORTABLE)
    .filter((f) => f.endsWith('.ndjson'))
    .map((f) => readFileSync(join(PORTABLE, f), 'utf8').trimEnd().split('\n'));

const ODD_VALUES: readonly unknown[] = [null, -1, 1.5, 0, 7, '', 'x', 's0.model', true, [], {}, { a: 1 }, 'never'];

/** Change one value somewhere inside `value` (a key dropped, a value replaced, a key added). */
function damage(value: unknown, pick: () => number): unknown {
  if (typeof value !== 'object' || value === null) return ODD_VALUES[Math.floor(pick() * ODD_VALUES.length)];
  const copy = (Array.isArray(value) ? [...value] : { ...value }) as Record<string, unknown>;
  const keys = Object.keys(copy);
  const roll = pick();
  if (keys.length === 0 || roll < 0.1)
    copy[['extra', 'status', 'usage', 'reasoning', 'resultId'][Math.floor(pick() * 5)] as string] = 1;
  else {
    const key = keys[Math.floor(pick() * keys.length)] as string;
    if (roll < 0.25 && !Array.isArray(copy)) delete copy[key];
    else copy[key] = roll < 0.6 ? damage(copy[key], pick) : ODD_VALUES[Math.floor(pick() * ODD_VALUES.length)];
  }
  return copy;
}

/** One damaged or forged copy of a log: a line's value changed, a line dropped, doubled, moved, or cut. */
function forge(lines: readonly string[], pick: () => number): string[] {
  const out = [...lines];
  const at = 1 + Math.floor(pick() * (out.length - 1));
  const roll = pick();
  if (roll < 0.6) out[at] = JSON.stringify(damage(JSON.parse(out[at] as string), pick));
  else if (roll < 0.7) out.splice(at, 1);
  else if (roll < 0.8) out.splice(at, 0, out[at] as string);
  else if (roll < 0.9) out.splice(Math.max(1, at - 1), 0, ...out.splice(at, 1));
  else out[at] = (out[at] as string).slice(0, Math.floor(pick() * (out[at] as string).length));
  return out;
}

describe('reading a log from its lines', () => {
  it('gives the view the general reader gives, for logs crashed at every write of a step and for whole runs', async () => {
    const logs = [...(await crashedLogs()), ...(await endedLogs())];
    const states = new Set<string>();
    for (const lines of logs) {
      const view = readRunLogLines(lines, SOURCE).view;
      states.add(`${view.state}/${view.inFlight?.resolution ?? '-'}`);
      expect(byLines(lines)).toBe(general(lines));
    }
    // Every state a crash leaves a step in was read (a result lands with its action intent, so
    // none is left to re-interpret: the portable logs hold that one).
    expect([...states].sort()).toEqual(
      expect.arrayContaining(['at_boundary/-', 'ended/-', 'in_flight/reissue_model', 'in_flight/replay_action']),
    );
  });

  it('gives the view the general reader gives for the portable logs of Node, Chromium and workerd', () => {
    const logs = portable();
    expect(logs.length).toBeGreaterThanOrEqual(24);
    for (const lines of logs) expect(byLines(lines)).toBe(general(lines));
  });

  it('refuses every damaged or forged log the general reader refuses, with the same error, and reads the rest the same', async () => {
    const pick = random(30);
    const bases = [...(await endedLogs()), ...(await crashedLogs()).slice(-4), ...portable().slice(0, 6)];
    let refused = 0;
    for (let k = 0; k < 4_000; k++) {
      const lines = stored(forge(bases[k % bases.length] as string[], pick));
      const expected = general(lines);
      if (!expected.startsWith('view')) refused++;
      expect(byLines(lines), `forgery ${k}:\n${lines.join('\n')}`).toBe(expected);
    }
    // The damage is real: most forgeries are refused, and some still read.
    expect(refused).toBeGreaterThan(1_000);
    expect(refused).toBeLessThan(4_000);
  });

  it('names the line of a damaged record as the general reader does, when an earlier step breaks the protocol too', async () => {
    const [bench] = await endedLogs();
    const lines = [...(bench as string[])];
    // Step 3's model intent is gone (a protocol fault at its result); line 30 does not parse at all.
    lines.splice(1 + 4 * 3, 1);
    lines[30] = '{"kind":';
    const expected = general(lines);
    expect(expected).toMatch(/^CorruptLogError: corrupt run log at the log:31: not valid JSON/);
    expect(byLines(lines)).toBe(expected);
  });
});

describe('the decoder’s common-shape path', () => {
  it('returns the very record the general reader returns, key order included, or leaves the record to it', async () => {
    const pick = random(7);
    const logs = [...(await endedLogs()), ...(await crashedLogs())].filter((l) => l.length > 1);
    let common = 0;
    for (let k = 0; k < 3_000; k++) {
      const base = logs[k % logs.length] as string[];
      const lines = k < logs.length ? base : stored(forge(base, pick));
      const fast = new StepContext();
      const slow = new StepContext();
      for (const line of lines) {
        let expected: LogRecord | null = null;
        try {
          expected = decodeGeneral(line, slow);
        } catch {
          // The general reader refuses the line: the common path must not have read it either.
        }
        let parsed: unknown = null;
        try {
          parsed = JSON.parse(line);
        } catch {}
        // As the decoder calls it: on a JSON object of record version 1.2.
        const got =
          typeof parsed === 'object' &&
          parsed !== null &&
          !Array.isArray(parsed) &&
          (parsed as { v?: unknown }).v === '1.2'
            ? readCommon(parsed as Record<string, unknown>, fast)
            : null;
        if (got !== null) {
          common++;
          expect(JSON.stringify(got)).toBe(JSON.stringify(expected));
        }
        if (expected) fast.note(expected);
        else break;
      }
    }
    expect(common).toBeGreaterThan(10_000);
  });
});

describe('FileStore.readLogLines', () => {
  it('gives the lines readLog decodes, drops a torn last line with the warning readLog gives, and resumes the run', async () => {
    const dir = await tempDir();
    const store = new FileStore({ dir });
    const inner = new InMemoryStore();
    await run(benchAgent(faultyStore(inner, { crashAfterWrites: 1 + 3 * 5 + 1 }), 8), benchRequest('f', 8)).catch(
      () => null,
    );
    const ndjson = encodeLog(await inner.readLog('f'));
    const { writeFile } = await import('node:fs/promises');
    await writeFile(store.logPath('f'), `${ndjson}{"kind":"intent","v":"1.2","in`);
    const warned: string[] = [];
    const read = await store.readLogLines('f', { onWarning: (w) => void warned.push(w.code) });
    expect(read).toEqual({ lines: ndjson.trimEnd().split('\n'), source: store.logPath('f') });
    expect(warned).toEqual(['torn_tail']);
    expect(decodeLog(read.lines).records).toEqual(await store.readLog('f'));
    const resumed = await resume(benchAgent(store, 8), benchRequest('f', 8));
    expect(resumed.stopReason).toBe('final_answer');
    expect(resumed.trajectory.map((s) => s.stepIndex)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(await store.readLogLines('never-written')).toEqual({ lines: [], source: store.logPath('never-written') });
  });

  it('refuses a resume of a forged FileStore log as the general reader would', async () => {
    const dir = await tempDir();
    const store = new FileStore({ dir });
    const inner = new InMemoryStore();
    await run(benchAgent(inner, 6), benchRequest('g', 6));
    const lines = await linesOf(inner, 'g');
    // Step 2's action intent names another step.
    lines[1 + 4 * 2 + 2] = (lines[1 + 4 * 2 + 2] as string).replace('"stepIndex":2', '"stepIndex":3');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(store.logPath('g'), `${lines.join('\n')}\n`);
    const expected = general(lines).replace('the log', 'run log');
    expect(expected).toMatch(/^CorruptLogError: corrupt run log at run log:12: intent for step 3 while step 2 is next/);
    await expect(resume(benchAgent(store, 6), benchRequest('g', 6))).rejects.toThrow(expected.slice(17));
  });
});

describe('a store’s readLogLines that misbehaves', () => {
  const wrapped = withReadLogLines;

  it('fails a resume with StoreError, writing nothing, when it resolves to anything but { lines, source }', async () => {
    const inner = new InMemoryStore();
    await run(benchAgent(faultyStore(inner, { crashAfterWrites: 6 }), 4), benchRequest('h', 4)).catch(() => null);
    const before = await inner.readLog('h');
    for (const answer of [null, [], { lines: 'x', source: 's' }, { lines: [1], source: 's' }, { lines: [] }]) {
      const store = wrapped(inner, async () => answer);
      await expect(resume(benchAgent(store, 4), benchRequest('h', 4))).rejects.toMatchObject({
        name: 'StoreError',
        operation: 'readLog',
      });
    }
    const store = wrapped(inner, async () => {
      throw new Error('disk gone');
    });
    await expect(resume(benchAgent(store, 4), benchRequest('h', 4))).rejects.toMatchObject({ name: 'StoreError' });
    expect(await inner.readLog('h')).toEqual(before);
  });
});
