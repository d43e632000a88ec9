/**
 * `readRunLogLines` keeps one held step for every read. A read that a refusal ended midway leaves
 * nothing for the next read; a read entered again from inside another (a `lines` getter that reads
 * a log itself) gives both the view, or the refusal, the general reader gives; and a resume reads
 * each line a store's `readLogLines` gives once, so the lines it checked are the lines it reads.
 */
import { describe, expect, it } from 'vitest';
import { benchAgent, benchRequest } from '../../../bench/fixtures.ts';
import { encodeLog, InMemoryStore, resume, run } from '../../../src/core/index.ts';
import type { RunStore } from '../../../src/core/index.ts';
import { faultyStore } from '../../../src/testing/index.ts';
import { byLines, general, withReadLogLines } from './log-readings.ts';

async function logOf(steps: number, crashAfterWrites?: number): Promise<string[]> {
  const inner = new InMemoryStore();
  const store = crashAfterWrites === undefined ? inner : faultyStore(inner, { crashAfterWrites });
  await run(benchAgent(store, steps), benchRequest('x', steps)).catch(() => null);
  return encodeLog(await inner.readLog('x'))
    .trimEnd()
    .split('\n');
}

/** `lines` with line `at` (0-based) passed through `edit`. */
function edited(lines: readonly string[], at: number, edit: (line: string) => string): string[] {
  const out = [...lines];
  out[at] = edit(out[at] as string);
  return out;
}

/** Good logs, and forged ones refused at each kind of check, several inside a step held whole. */
async function logs(): Promise<Record<string, string[]>> {
  const good = await logOf(6);
  // Step k's lines: its model intent at 1 + 4k, result, action intent, step record.
  return {
    good,
    // The same steps, each reply another model call's: a view read with a held step of the other log shows.
    'good, other replies': good.map((l) => l.replaceAll('"callId":"c', '"callId":"other-')),
    crashed: await logOf(6, 1 + 4 * 3 + 2),
    // Steps 0-3 read by the general reader (a reply's keys in another order): step 4 is the first held.
    'good, step 4 the first held': good.map((l, i) =>
      i < 1 + 4 * 4 ? l.replace(/"reply":\{("callId":"[^"]*"),("text":"(?:[^"\\]|\\.)*")\}/, '"reply":{$2,$1}') : l,
    ),
    'a line that does not parse': edited(good, 7, () => '{"kind":'),
    'a record of another version': edited(good, 10, (l) => l.replace('"v":"1.2"', '"v":"9.0"')),
    'an action intent of another step': edited(good, 1 + 4 * 2 + 2, (l) => l.replace('"stepIndex":2', '"stepIndex":3')),
    'a step record of another step': edited(good, 1 + 4 * 1 + 3, (l) => l.replace('"stepIndex":1', '"stepIndex":2')),
    'a step record with a bad outcome': edited(good, 1 + 4 * 3 + 3, (l) =>
      l.replace('"observation":', '"status":7,"observation":'),
    ),
    'a result with another reply': edited(good, 1 + 4 * 2 + 1, (l) => l.replace('"text":', '"reasoning":1,"text":')),
    'a run_ended that miscounts': edited(good, good.length - 1, (l) => l.replace('"steps":6', '"steps":5')),
  };
}

/** `lines` as an array whose getter runs `onGet` with the index before giving each line. */
function reentrant(lines: readonly string[], onGet: (i: number) => void): readonly string[] {
  return new Proxy([...lines], {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) onGet(Number(key));
      return Reflect.get(target, key, receiver);
    },
  });
}

describe('the held step shared by every read', () => {
  it('gives each read of a good or forged log what the general reader gives, whatever read or refusal came before', async () => {
    const all = await logs();
    const expected = Object.fromEntries(Object.entries(all).map(([name, lines]) => [name, general(lines)]));
    expect(Object.values(expected).filter((e) => e.startsWith('view'))).toHaveLength(4);
    for (const [first, a] of Object.entries(all))
      for (const [second, b] of Object.entries(all)) {
        expect(byLines(a), first).toBe(expected[first]);
        expect(byLines(b), `${second} after ${first}`).toBe(expected[second]);
      }
  });

  it('gives a read entered again from a lines getter, and the read it entered, what the general reader gives', async () => {
    const all = await logs();
    const inners = [
      all['a step record with a bad outcome'],
      all['good, other replies'],
      all['a line that does not parse'],
    ];
    const entered = { inner: 0, nested: 0 };
    const wrong: string[] = [];
    for (const name of ['good', 'crashed', 'a step record with a bad outcome', 'an action intent of another step']) {
      const outer = all[name] as string[];
      for (let at = 0; at < outer.length; at++) {
        const inner = inners[at % inners.length] as string[];
        // The inner read is itself entered again at its own line `at`, with a third log.
        const nested = reentrant(inner, (i) => {
          if (i !== at) return;
          entered.nested++;
          if (byLines(all['good'] as string[]) !== general(all['good'] as string[])) wrong.push(`${name}/${at}/nested`);
        });
        const lines = reentrant(outer, (i) => {
          if (i !== at) return;
          entered.inner++;
          if (byLines(nested) !== general(inner)) wrong.push(`${name}/${at}/inner`);
        });
        expect(byLines(lines), `${name}, entered at line ${at + 1}`).toBe(general(outer));
      }
    }
    expect(wrong).toEqual([]);
    expect(entered.inner).toBeGreaterThan(80);
    expect(entered.nested).toBeGreaterThan(20);
  });
});

describe('a store’s readLogLines whose lines are not a plain array', () => {
  const wrapped = (inner: InMemoryStore, lines: () => readonly string[]): RunStore =>
    withReadLogLines(inner, async () => ({ lines: lines(), source: 'hostile' }));

  async function crashedStore(): Promise<{ inner: InMemoryStore; lines: string[] }> {
    const inner = new InMemoryStore();
    await run(benchAgent(faultyStore(inner, { crashAfterWrites: 1 + 4 * 3 + 2 }), 6), benchRequest('h', 6)).catch(
      () => null,
    );
    return {
      inner,
      lines: encodeLog(await inner.readLog('h'))
        .trimEnd()
        .split('\n'),
    };
  }

  it('resumes a run as from plain lines when the getter of its lines reads another log meanwhile', async () => {
    const plain = await crashedStore();
    const hostile = await crashedStore();
    const forged = edited(plain.lines, 6, (l) => l.replace('"stepIndex":1', '"stepIndex":4'));
    let entered = 0;
    let wrong = 0;
    const lines = () =>
      reentrant(hostile.lines, () => {
        entered++;
        if (byLines(forged) !== general(forged)) wrong++;
      });
    const want = await resume(benchAgent(plain.inner, 6), benchRequest('h', 6));
    const got = await resume(benchAgent(wrapped(hostile.inner, lines), 6), benchRequest('h', 6));
    expect(entered).toBeGreaterThan(0);
    expect(wrong).toBe(0);
    expect(got.stopReason).toBe(want.stopReason);
    expect(got.trajectory.map((s) => [s.stepIndex, s.modelText, s.observation])).toEqual(
      want.trajectory.map((s) => [s.stepIndex, s.modelText, s.observation]),
    );
  });

  it('resumes a run as from plain lines when its lines read as other values after their first read', async () => {
    const plain = await crashedStore();
    const want = await resume(benchAgent(plain.inner, 6), benchRequest('h', 6));
    for (const later of [7, null, { toString: () => plain.lines[1] }]) {
      const { inner, lines } = await crashedStore();
      // Each line is its string the first time it is read, and `later` every time after.
      const flipping = () => {
        const reads = new Set<string>();
        return new Proxy([...lines], {
          get(target, key, receiver) {
            if (typeof key !== 'string' || !/^\d+$/.test(key) || !reads.has(key)) {
              reads.add(String(key));
              return Reflect.get(target, key, receiver);
            }
            return later;
          },
        }) as readonly string[];
      };
      const got = await resume(benchAgent(wrapped(inner, flipping), 6), benchRequest('h', 6));
      expect(got.stopReason, String(later)).toBe(want.stopReason);
      expect(got.trajectory.map((s) => [s.stepIndex, s.modelText, s.observation])).toEqual(
        want.trajectory.map((s) => [s.stepIndex, s.modelText, s.observation]),
      );
    }
  });
});
