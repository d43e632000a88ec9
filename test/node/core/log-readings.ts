/** What the general log reader and the line reader each give for the same lines, as text to compare. */
import { decodeLog, readRunLog } from '../../../src/core/index.ts';
import type { InMemoryStore, RunStore } from '../../../src/core/index.ts';
import { readRunLogLines } from '../../../src/core/log-lines.ts';

/** The source name both readers are given, so their refusals name the same log. */
export const SOURCE = 'the log';

/** The view (as JSON) or the error (its class and message) a reading gives. */
export function outcome(read: () => unknown): string {
  try {
    return `view ${JSON.stringify(read())}`;
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
}

/** The general reader's answer: every line decoded, then the view read from the records. */
export const general = (lines: readonly string[]): string =>
  outcome(() => readRunLog(decodeLog(lines, { source: SOURCE }).records));

/** The line reader's answer (what a resume reads with). */
export const byLines = (lines: readonly string[]): string => outcome(() => readRunLogLines(lines, SOURCE).view);

/** `inner`'s writes and `readLog`, with `readLogLines` as given: a store whose lines a test chooses. */
export const withReadLogLines = (inner: InMemoryStore, readLogLines: () => Promise<unknown>): RunStore => ({
  runStarted: (id, r) => inner.runStarted(id, r),
  intent: (id, r) => inner.intent(id, r),
  result: (id, rid, r) => inner.result(id, rid, r),
  step: (id, r) => inner.step(id, r),
  runEnded: (id, r) => inner.runEnded(id, r),
  readLog: (id) => inner.readLog(id),
  readLogLines: readLogLines as NonNullable<RunStore['readLogLines']>,
});
