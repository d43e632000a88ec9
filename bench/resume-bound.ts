/**
 * Where a resume of a run crashed at step N goes, and what an ideal reader would cost:
 * `node --expose-gc --import tsx bench/resume-bound.ts [steps] [rounds]`.
 *
 * 1. Real resumes on FileStore, their phases timed from outside (the store's methods wrapped): the
 *    lease, `readLogLines`, what follows until the first append (reading the view, checks, the
 *    driver's history), the takeover mark until the model is called.
 * 2. In one process, the same log read as the floor (read + `JSON.parse` every line), as an ideal
 *    reader (the same step records built from the parsed lines, nothing checked), with and without
 *    the history a driver rebuilds, and as resume reads it (`readLogLines` + `readRunLogLines`).
 * @module
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeLog, resume } from '../src/core/index.ts';
import { History } from '../src/core/history.ts';
import { readRunLogLines } from '../src/core/internal-entry.ts';
import { draftStep } from '../src/core/step-record.ts';
import type { StepRecord } from '../src/core/types.ts';
import { FileStore } from '../src/platform-node/index.ts';
import { benchAgent, benchRequest } from './fixtures.ts';
import { crashedLog, parseFloorMs } from './resume.ts';

const n = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 8);
const dir = await mkdtemp(join(tmpdir(), 'polyloop-resume-bound-'));
const source = join(dir, 'source.jsonl');
await writeFile(source, encodeLog(await crashedLog(n)));
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const median = (v: readonly number[]): number => [...v].sort((a, b) => a - b)[v.length >> 1] as number;
const range = (v: readonly number[]): string => `${Math.min(...v).toFixed(1)}–${Math.max(...v).toFixed(1)}`;

// 1. Phases of real resumes.
const phases: Record<string, number[]> = {};
for (let i = 0; i < rounds; i++) {
  const d = join(dir, `copy-${i}`);
  await mkdir(d);
  const store = new FileStore({ dir: d });
  await writeFile(store.logPath('crashed'), await readFile(source));
  let t0 = 0;
  let last = 0;
  const mark = (phase: string): void => {
    const t = performance.now() - t0;
    (phases[phase] ??= []).push(t - last);
    last = t;
  };
  const wrapped = store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const readLines = store.readLogLines.bind(store);
  wrapped['readLogLines'] = async (...a: unknown[]) => {
    mark('the lease (lock and stop files)');
    const got = await (readLines as (...b: unknown[]) => Promise<unknown>)(...a);
    mark('readLogLines (read, strict UTF-8, split)');
    return got;
  };
  const append = (wrapped['append'] as (...a: unknown[]) => Promise<unknown>).bind(store);
  let first = true;
  wrapped['append'] = async (...a: unknown[]) => {
    if (first) mark('the view read, checked, the history rebuilt');
    const done = await append(...a);
    first = false;
    return done;
  };
  let called = -1;
  const agent = benchAgent(store, n + 2, (call) => {
    if (called >= 0 || call.callSeq !== n) return;
    mark('the takeover mark, until the model is called');
    called = last;
  });
  gc();
  t0 = performance.now();
  await resume(agent, benchRequest('crashed', n + 2));
  (phases['resume, until the model is called'] ??= []).push(called);
  gc();
  (phases['floor: read + JSON.parse every line'] ??= []).push(await parseFloorMs(null, source));
}
console.log(`resume at step ${n} on FileStore, ${rounds} resumes (ms: median, range)`);
for (const [k, v] of Object.entries(phases))
  console.log(`  ${k.padEnd(48)} ${median(v).toFixed(1).padStart(7)}  ${range(v)}`);

// 2. An ideal reader beside the floor and beside what resume runs.
type Obj = Record<string, unknown>;
/** The step records of an ordinary run's lean lines, built from the parsed lines with nothing checked. */
function unchecked(lines: readonly string[]): StepRecord[] {
  const out: StepRecord[] = [];
  let reply: Obj = {};
  let decision: Obj = {};
  for (const line of lines) {
    const r = JSON.parse(line) as Obj;
    if (r['kind'] === 'result') reply = r['reply'] as Obj;
    else if (r['kind'] === 'intent' && r['decision']) decision = r['decision'] as Obj;
    else if (r['kind'] === 'step') {
      const s = r['step'] as Obj;
      const o = (r['actionResult'] as Obj | undefined)?.['outcome'] as Obj | undefined;
      const action = decision['action'] as Obj;
      // Built as the loop builds a step (one literal of every field, then filled in).
      const step = draftStep(s['stepIndex'] as number, s['startedAt'] as string) as Record<string, unknown>;
      step['modelCallId'] = reply['callId'];
      step['modelText'] = reply['text'];
      step['reasoning'] = reply['reasoning'] ?? null;
      step['decision'] = 'action';
      step['actionRepr'] = `${String(action['name'])}(${JSON.stringify(action['arguments'])})`;
      step['historyText'] = reply['text'];
      step['observation'] = o?.['observation'] ?? null;
      step['actionStatus'] = o?.['status'] ?? 'executed';
      step['usage'] = reply['usage'] ?? null;
      step['finishReason'] = reply['finishReason'] ?? null;
      step['endedAt'] = s['endedAt'];
      out.push(step as StepRecord);
    }
  }
  return out;
}
const history = (steps: readonly StepRecord[]): History => {
  const h = new History([], 'Observation: {observation}', { notExecuted: 'n', envError: 'e' });
  h.resumeFrom(steps);
  return h;
};
const store = new FileStore({ dir: join(dir, 'reads') });
await mkdir(store.dir);
await writeFile(store.logPath('r'), await readFile(source));
const readLines = async (): Promise<string[]> => {
  const lines = (await readFile(source, 'utf8')).split('\n');
  lines.pop();
  return lines;
};
const viewOf = async () => {
  const { lines, source: src } = await store.readLogLines('r');
  return readRunLogLines(lines, src).view;
};
const variants: Record<string, () => Promise<unknown>> = {
  'floor: read + JSON.parse every line': () => parseFloorMs(null, source),
  'ideal: step records built, nothing checked': async () => unchecked(await readLines()),
  'ideal, and the history': async () => history(unchecked(await readLines())),
  'resume: readLogLines + readRunLogLines': viewOf,
  'resume, and the history': async () => history((await viewOf()).trajectory),
};
const times: Record<string, number[]> = {};
let kept: unknown = null;
for (let i = 0; i < Math.max(rounds, 11); i++) {
  for (const [k, f] of Object.entries(variants)) {
    kept = null;
    gc();
    const t = performance.now();
    kept = await f();
    (times[k] ??= []).push(performance.now() - t);
  }
}
void kept;
const floor = median(times['floor: read + JSON.parse every line'] ?? []);
console.log(
  `\nthe same log read in one process, ${Math.max(rounds, 11)} rounds (ms: median, ratio to the floor, range)`,
);
for (const [k, v] of Object.entries(times))
  console.log(`  ${k.padEnd(48)} ${median(v).toFixed(1).padStart(7)}  ${(median(v) / floor).toFixed(2)}×  ${range(v)}`);
await rm(dir, { recursive: true, force: true });
