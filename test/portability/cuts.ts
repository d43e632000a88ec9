/**
 * The named cuts the cross-runtime fixtures of the portability law are taken at, the fixtures'
 * names, and what a fixture "says". Two generations of fixtures are checked in: the current
 * schema (`<runtime>-<cut>.ndjson`, written by `npm run fixtures:portability`) and the 1.0-era logs
 * (`<runtime>-v1.0-<cut>.ndjson`, never rewritten: they prove old logs still import and finish).
 */
import { decodeLog, exportRun, InMemoryStore, readRunLog } from '../../src/core/index.ts';
import type { LogRecord, RunStore } from '../../src/core/index.ts';
import { cutRun, notifyExecuted, RUN_ID, timeless, uninterrupted } from './reference.ts';
import type { Outcome, Usage, Variant } from './reference.ts';

/** The named cut points. */
export const CUTS = ['boundary', 'reinterpret', 'replay', 'awaiting', 'approved'] as const;
export type Cut = (typeof CUTS)[number];

/** The cuts the 1.0-era fixtures were taken at (before human input existed). */
export const V10_CUTS = ['boundary', 'reinterpret', 'replay'] as const satisfies readonly Cut[];

/** The reference variant a cut is taken from: the last two are of the run that asks for approval. */
export const variantOf = (cut: Cut): Variant => (cut === 'awaiting' || cut === 'approved' ? 'approval' : 'plain');

/** The state (`state:resolution`) the log left at each cut is in. */
export const CUT_STATES: Record<Cut, string> = {
  boundary: 'at_boundary:-',
  reinterpret: 'in_flight:reinterpret',
  replay: 'in_flight:replay_action',
  awaiting: 'awaiting_input:await_input',
  approved: 'in_flight:apply_input',
};

export const stateOf = (records: readonly LogRecord[]): string => {
  const view = readRunLog(records);
  return `${view.state}:${view.inFlight?.resolution ?? '-'}`;
};

/**
 * The write count `k` that leaves a log in the cut's state, found from the uninterrupted log of
 * the cut's variant (never a constant). `boundary` right after the notify's step, `reinterpret`
 * the last model result without its action intent (the final reply), `replay` the last safe action
 * intent without its step — each after the `never` notify ran, which no resume may repeat;
 * `awaiting` the approval request stored (the run waits for a person), `approved` the approval
 * stored without anything after it (a crash right after the reply) — the notify has not run.
 */
export function cutPoint(log: readonly LogRecord[], cut: Cut): number {
  const views = log.map((_, i) => readRunLog(log.slice(0, i + 1)));
  const notified = (v: (typeof views)[number]): boolean => v.trajectory.some(notifyExecuted);
  const lastIndex = (hit: (v: (typeof views)[number]) => boolean): number => views.map(hit).lastIndexOf(true);
  const at =
    cut === 'boundary'
      ? views.findIndex((v) => v.state === 'at_boundary' && notified(v))
      : cut === 'reinterpret'
        ? lastIndex((v) => v.inFlight?.resolution === 'reinterpret' && notified(v))
        : cut === 'replay'
          ? lastIndex((v) => v.inFlight?.resolution === 'replay_action' && notified(v))
          : cut === 'awaiting'
            ? views.findIndex((v) => v.state === 'awaiting_input' && v.pending?.kind === 'approval')
            : lastIndex((v) => v.inFlight?.resolution === 'apply_input');
  if (at < 0) throw new Error(`the reference log has no ${cut} cut`);
  return at + 1;
}

/**
 * How many writes land the first `records` records of `log` on a store: one record a write, but
 * a model result and the action intent right after it are one write where the store has
 * `resultAndIntent` (`joint`; decision 0040).
 */
export function writesFor(log: readonly LogRecord[], records: number, joint: boolean): number {
  let writes = 0;
  for (let i = 0; i < records; i++) {
    const next = log[i + 1];
    if (joint && log[i]?.kind === 'result' && next?.kind === 'intent' && next.intent === 'action') {
      if (i + 1 >= records)
        throw new Error(`no write leaves record ${records} without the action intent written with it`);
      i++;
    }
    writes++;
  }
  return writes;
}

/** The fixture of a runtime's store at a cut: the reference (of the cut's variant) crashed there, exported. */
export async function fixtureOf(store: RunStore, cut: Cut): Promise<string> {
  const { log: full } = await uninterrupted(new InMemoryStore(), variantOf(cut));
  const log = await cutRun(
    store,
    writesFor(full, cutPoint(full, cut), store.resultAndIntent !== undefined),
    false,
    [],
    variantOf(cut),
  );
  if (stateOf(log) !== CUT_STATES[cut]) throw new Error(`cut ${cut} left a log in state ${stateOf(log)}`);
  return exportRun(store, RUN_ID);
}

export const RUNTIMES = ['node', 'workerd', 'chromium'] as const;
export type Runtime = (typeof RUNTIMES)[number];

/** A current fixture's file name. */
export const fixtureName = (runtime: Runtime, cut: Cut): string => `${runtime}-${cut}.ndjson`;

/** A 1.0-era fixture's file name. */
export const v10FixtureName = (runtime: Runtime, cut: Cut): string => `${runtime}-v1.0-${cut}.ndjson`;

/**
 * What a log says, as `readRunLog` reads it: record kinds, state, in-flight resolution and the
 * trajectory without times. A fixture must still say what the runtime writes today.
 */
export function meaningOf(ndjson: string): unknown {
  const records = decodeLog(ndjson).records;
  const view = readRunLog(records);
  return {
    // Where a later driver took over is not what the log says happened (fixtures written before the
    // marks have none; test/node/portability/old-logs-resumed.test.ts covers the marks themselves).
    kinds: records
      .filter((r) => r.kind !== 'resumed')
      .map((r) => (r.kind === 'intent' ? `intent:${r.intent}` : r.kind)),
    state: view.state,
    resolution: view.inFlight?.resolution ?? null,
    pending: view.pending,
    trajectory: timeless(view.trajectory),
  };
}

const TIMES = new Set(['startedAt', 'endedAt', 'requestedAt', 'receivedAt']);
const untimed = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !TIMES.has(k)));

/** The NDJSON without its timestamps: fixtures of one cut, written by different runtimes, agree on it. */
export function timelessNdjson(ndjson: string): unknown[] {
  return ndjson
    .trimEnd()
    .split('\n')
    .map((line) => {
      const rec = untimed(JSON.parse(line) as Record<string, unknown>);
      const step = rec['step'] as Record<string, unknown> | undefined;
      return step ? { ...rec, step: untimed(step) } : rec;
    });
}

/**
 * What a 1.0-era fixture must finish as: the uninterrupted outcome, except that the steps whose
 * model reply the 1.0 log already held have the 1.1 defaults (no usage, no finish reason) — a
 * 1.0 log never recorded them, and decoding fills null — and the token total counts only the rest.
 */
export function expectedOfV10(records: readonly LogRecord[], full: Outcome): Outcome {
  const held = new Set(records.filter((r) => r.kind === 'result').map((r) => r.stepIndex));
  const trajectory = full.trajectory.map((s) =>
    held.has(s.stepIndex) ? { ...s, usage: null, finishReason: null } : s,
  );
  const usage = trajectory.reduce<Usage>(
    (sum, s) => ({
      inputTokens: sum.inputTokens + (s.usage?.inputTokens ?? 0),
      outputTokens: sum.outputTokens + (s.usage?.outputTokens ?? 0),
    }),
    { inputTokens: 0, outputTokens: 0 },
  );
  return { ...full, usage, trajectory };
}

/**
 * What finishing a fixture must show besides the uninterrupted outcome: the requests answered
 * after the import (the approval at `awaiting`; none elsewhere — the approval at `approved` is
 * already stored and is carried out) and how often the notify runs in this half (never again
 * where the fixture holds it executed; exactly once where it does not).
 */
export function finishDemands(
  ndjson: string,
  cut: Cut,
): { readonly answered: readonly string[]; readonly notifies: number } {
  const view = readRunLog(decodeLog(ndjson).records);
  return {
    answered: cut === 'awaiting' ? ['approval:approve'] : [],
    notifies: view.trajectory.some(notifyExecuted) ? 0 : 1,
  };
}

/** How often the notify ran, in a list of executions. */
export const notifies = (effects: readonly string[]): number => effects.filter((e) => e.startsWith('notify:')).length;
