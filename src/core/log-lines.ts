/**
 * Reading a run log from the lines a store holds, without building every record
 * (docs/design/run-log.md#reading-a-log-fast). A resume needs the log's view — its steps, counters
 * and the step in flight — not its 40,000 records: an ordinary action step's four lines become one
 * step record here, checked as the general reader checks them, and every other line is read by the
 * general reader. The view, and every refusal, is the one `readRunLog(decodeLog(lines).records)`
 * gives; `test/node/core/log-lines.test.ts` holds the two to that.
 * @module
 */
import { CorruptLogError } from './errors.ts';
import { LogClassifier } from './internal/recovery.ts';
import type { FindLine } from './internal/recovery.ts';
import { HeldStep, heldStep } from './lean-common.ts';
import { isObj } from './record-fields.ts';
import type { Obj } from './record-fields.ts';
import type { ReadLogOptions, RunStore, StoredLines } from './ports.ts';
import { ReplyCheck, readRunLog, viewOf } from './run-log.ts';
import { decodeLog, LogCodec } from './serialization.ts';
import { RECORD_VERSION } from './types.ts';
import type { LogRecord, RunLogView, StepRecord } from './types.ts';

/** What a reading of a run log gives a resume: its view, and the lines of the records an error names. */
export type ResumeReading = { readonly view: RunLogView; readonly findLine: FindLine };

/** A reading of decoded records (every store's `readLog`). */
export function readingOf(records: readonly LogRecord[]): ResumeReading {
  return { view: readRunLog(records), findLine: (pred) => records.findIndex(pred) + 1 };
}

/**
 * Read a run's log for a resume: through the store's `readLogLines` when it has one, else its
 * `readLog`. `read` wraps each store call (the caller's guard: its errors and its abort).
 */
export async function readStoredLog(
  store: RunStore,
  runId: string,
  opts: ReadLogOptions,
  read: <T>(fn: () => Promise<T>) => Promise<T>,
): Promise<ResumeReading> {
  const readLines = store.readLogLines;
  if (typeof readLines !== 'function') return readingOf(await read(() => store.readLog(runId, opts)));
  const stored = await read(async () => {
    const got: unknown = await readLines.call(store, runId, opts);
    const given = isObj(got) ? got['lines'] : undefined;
    // Copied once, then checked: the reader reads the strings that were checked, and no code of the
    // store's (a proxy, a getter) runs in the middle of a read.
    const lines: unknown[] | null = Array.isArray(given) ? Array.from(given as unknown[]) : null;
    const source = isObj(got) ? got['source'] : undefined;
    if (lines === null || !lines.every((l) => typeof l === 'string') || typeof source !== 'string')
      throw new TypeError('readLogLines must resolve to { lines: string[], source: string }');
    return { lines: lines as string[], source };
  });
  return readRunLogLines(stored.lines, stored.source);
}

/**
 * The lines of a store whose writes land whole (a transaction, a row), as `readLogLines` gives them:
 * a last line that is not JSON was damaged, not torn, and is refused with `reason` as the store's
 * `readLog` refuses it — after any line before it that does not decode, which a whole-log decode
 * reports first.
 */
export function committedLines(lines: readonly string[], source: string, reason: string): StoredLines {
  const last = lines.at(-1);
  if (last !== undefined && parsedJson(last) === undefined) {
    decodeLog(lines.slice(0, -1), { source });
    throw new CorruptLogError(lines.length, reason, { source });
  }
  return { lines, source };
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The held step's reply and decision: one for every read, since a read is synchronous and `hold`
 * starts afresh. It is live only from `hold` to `heldStep`, with no caller's code between: a read
 * entered again from a getter of another read's `lines` leaves that read nothing to see. With a
 * new one a read, V8 threw away its optimized code for the step checks after every read, and each
 * read ran them cold (a fifth of a read's CPU time on a 10,000-step log).
 */
const SCRATCH = /* @__PURE__ */ new HeldStep();

/** The kinds whose records an error may name by line (a gate's request, an upgrade), or a reply check reads. */
const KEPT: ReadonlySet<string> = new Set(['input_request', 'input', 'upgrade']);

/**
 * Read the lines of one run log (each as its store's `LogCodec` wrote it, from the first; a torn
 * last line already dropped): the view `readRunLog` gives of the decoded records, and the same
 * refusals — a line that does not decode first (naming `source`), then one that breaks the write
 * protocol, then a reply its request does not accept, then an end that disagrees with its steps.
 */
export function readRunLogLines(lines: readonly string[], source: string): ResumeReading {
  const codec = new LogCodec();
  const c = new LogClassifier();
  const kept: [LogRecord, number][] = [];
  // The step being read whole, as parsed: its model-call intent, result and action intent, the
  // `n` lines before line `i`. One array for the whole read: a new one a step, of `{ i, p }`
  // objects, was a fifth of what the read allocated.
  const held: Obj[] = [];
  let n = 0;
  let broken: unknown = null;
  const general = (i: number): void => {
    const rec = LogCodec.lineOf(codec, lines[i] as string, i + 1, source);
    if (KEPT.has(rec.kind)) kept.push([rec, i]);
    if (broken !== null) return;
    try {
      c.accept(rec, i);
    } catch (e) {
      // A line further on that does not decode is reported first, as a whole-log decode would.
      broken = e;
    }
  };
  const release = (to: number): void => {
    const from = to - n;
    n = 0;
    for (let i = from; i < to; i++) general(i);
  };
  for (let i = 0; i < lines.length; i++) {
    const p = broken === null ? parsed(lines[i] as string) : null;
    const step = p === null ? null : take(p, held, n, c, SCRATCH);
    if (step === 'held') {
      held[n++] = p as Obj;
      continue;
    }
    if (step !== null) {
      c.acceptCheckedStep(step);
      n = 0;
      continue;
    }
    release(i);
    general(i);
  }
  release(lines.length);
  if (broken !== null) throw broken;
  const classified = c.end();
  const replies = new ReplyCheck();
  for (const [rec, i] of kept) replies.accept(rec, i);
  const view = viewOf(classified, lines.length);
  const findLine: FindLine = (pred) => (kept.find(([rec]) => pred(rec))?.[1] ?? -1) + 1;
  return { view, findLine };
}

const OF_THIS_VERSION = `"v":"${RECORD_VERSION}"`;

/**
 * The line as JSON when it may be a record of this version, else null (the general reader then
 * reads it, and says why it cannot): a log of an older version is not parsed twice.
 */
function parsed(text: string): Obj | null {
  if (!text.includes(OF_THIS_VERSION)) return null;
  try {
    const p: unknown = JSON.parse(text);
    return isObj(p) && p['v'] === RECORD_VERSION ? p : null;
  } catch {
    return null;
  }
}

const ORDINARY = ['model_call', 'result', 'action', 'step'];

/**
 * Whether `p` goes on the ordinary action step being held (its first `at` records in `held`):
 * `'held'` for its next record, the step record (checked, its fields filled in from the held
 * records) when it closes the step, else null.
 */
function take(p: Obj, held: readonly Obj[], at: number, c: LogClassifier, step: HeldStep): 'held' | StepRecord | null {
  if (at === 0 && !c.atBoundary) return null;
  const what = p['kind'] === 'intent' ? p['intent'] : p['kind'];
  const index = p['kind'] === 'step' ? (isObj(p['step']) ? p['step']['stepIndex'] : undefined) : p['stepIndex'];
  if (what !== ORDINARY[at] || index !== c.nextStep) return null;
  if (at < 3) return 'held';
  // The whole step is here: read it as the general reader would, from the records it refers to.
  return step.hold(c.nextStep, held[0] as Obj, held[1] as Obj, held[2] as Obj) ? heldStep(p, step) : null;
}
