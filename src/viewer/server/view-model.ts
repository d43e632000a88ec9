/**
 * What the run viewer's page is told about a run: thin JSON shapes over the one reading of its log
 * (`readRunLog`, docs/design/run-log.md#one-reader) — a summary, pages of steps with the records
 * that belong to each step, and the open requests with the replies each accepts. Pure: the records
 * come in, JSON goes out. A log that cannot be read whole is read as far as it can be and says why
 * it stopped there.
 * @module
 */
import { acceptedReplies, childRunsOf, LogCodec } from '../../core/index.ts';
import { readReadablePrefix } from '../../core/internal-entry.ts';
import type { PrefixReading } from '../../core/internal-entry.ts';
import type {
  Action,
  ChildRunRef,
  InputRecord,
  InputRequest,
  ForkOrigin,
  InputRequestRecord,
  LogRecord,
  RunLogView,
  StepRecord,
  StopRequest,
  Usage,
} from '../../core/index.ts';
import { isCompleteJson } from '../../platform-node/log-text.ts';
import { callsInFlight } from './calls.ts';
import type { CallInFlightSummary } from './calls.ts';
import { askedIn } from './run-tree.ts';
import type { ReplyRoute } from './run-tree.ts';
import { driverOf, resumeSummaries } from './resumes.ts';
import type { ResumeSummary } from './resumes.ts';
import { upgradeSummaries } from './upgrades.ts';
import type { UpgradeSummary } from './upgrades.ts';

/** A decoded log, read as far as it can be: core's reading of its readable prefix, and where and why it stopped. */
export type LogReading = Pick<PrefixReading, 'records' | 'view'> & {
  /** Why the log could not be read past `records` (a corrupt line, a write-order break), else null. */
  readonly error: string | null;
  /** Repairs a reader should know of (a torn last line, ignored). */
  readonly warnings: readonly string[];
  /** Lines of the log text, the torn one included. */
  readonly lines: number;
};

/** Per step: the person's part (requests and replies) and how often each operation was announced. */
type StepExtras = {
  readonly requests: InputRequestRecord[];
  readonly inputs: InputRecord[];
  modelIntents: number;
  actionIntents: number;
  action: Action | null;
};

const extrasCache = new WeakMap<LogReading, ReadonlyMap<number, StepExtras>>();

/**
 * Read NDJSON text record by record. A torn last line (a write cut short) is left out with a
 * warning, as every store does; a bad line elsewhere, or a record `readRunLog` refuses, ends the
 * reading there with `error` naming the line — the steps before it are still shown.
 */
export function readLogText(text: string, source: string): LogReading {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const records: LogRecord[] = [];
  const warnings: string[] = [];
  let error: string | null = null;
  // In order, through one codec: a record may refer to the records of its step before it.
  const codec = new LogCodec();
  for (let i = 0; i < lines.length; i++) {
    try {
      records.push(codec.decode(lines[i] as string));
    } catch (e) {
      if (i === lines.length - 1 && !isCompleteJson(lines[i] as string))
        warnings.push(`ignored a torn last line (line ${i + 1}): a write cut short by a crash`);
      else error = `${source}:${i + 1}: ${reason(e)}`;
      break;
    }
  }
  // A record `readRunLog` refuses cuts the reading there, as a bad line does.
  const { records: read, view, refusal } = readReadablePrefix(records);
  if (refusal !== null) error = `${source}:${refusal.line}: ${reason(refusal)}`;
  return { records: read, view, error, warnings, lines: lines.length };
}

/** The error's own words, without the "corrupt run log at line n:" its message starts with. */
function reason(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/^corrupt run log at [^:]*(:\d+)?: /, '');
}

/** Where a run stands for the viewer. `running` and `interrupted` differ only by a live driver. */
export type ViewStatus = 'running' | 'interrupted' | 'awaiting_input' | 'ended' | 'halted' | 'corrupt';

/** A row of the run list. */
export type ViewRunRow = {
  readonly runId: string;
  readonly status: ViewStatus;
  readonly stopReason: string | null;
  readonly steps: number | null;
  readonly createdAt: string | null;
  readonly updatedAt: string | null;
  readonly error: string | null;
  /** In a run list: the run whose sub-agent this run is, when that run is listed too (rows in tree order). */
  readonly parentRunId?: string | null;
};

/** The run page's header and end: state, counters, usage, the in-flight step, the open requests. */
export type RunSummary = ViewRunRow & {
  readonly state: string;
  readonly finalAnswer: string | null;
  readonly validActions: number;
  /** Summed over the steps; null when no step carries usage (no reply metadata). */
  readonly usage: Usage | null;
  readonly warnings: readonly string[];
  /** The sequence number of the last record read (-1: none): follow the events after it. */
  readonly lastSeq: number;
  /** First and last time in the log, for the timeline's scale. */
  readonly span: { readonly start: string | null; readonly end: string | null };
  readonly inFlight: InFlightSummary | null;
  /** The first open request (null when none is open): the first of `openRequests`. */
  readonly pending: PendingSummary | null;
  /** Every open request, in call order: several while a step with several calls waits for them. */
  readonly openRequests: readonly PendingSummary[];
  /** Where the run went on under new code (its `upgrade` records), in order. */
  readonly upgrades: readonly UpgradeSummary[];
  /**
   * Where a later driver took the run over (its `resumed` records), in order, each with its driver
   * session: the steps from a mark's `stepIndex` on were carried out by that driver, until the next.
   */
  readonly resumes: readonly ResumeSummary[];
  /** Whether this viewer can carry out a reply, and if not why. */
  readonly answering: { readonly enabled: boolean; readonly why: string | null };
  /** The sub-agent runs this run's log names (`childRunsOf`), in step order. */
  readonly children: readonly ChildRunRef[];
  /** A sub-agent's run: the run whose sub-agent it is, when the viewer has it; else null. */
  readonly parentRunId: string | null;
  /**
   * A sub-agent's run its parent waits on: the run and request a reply to it is given to (the
   * topmost run waiting on it, which carries the reply down). Null: replies go to this run.
   */
  readonly replyTo: ReplyRoute | null;
  /** A fork (`forkRun`): the run and step it was made from (`run_started.forkedFrom`); else null. */
  readonly forkedFrom: ForkOrigin | null;
  /** A run ended by a stop someone asked for: the request, with its reason (`run_ended.stopRequest`); else null. */
  readonly stopRequest: StopRequest | null;
};

/** The step in flight (or waiting) at the end of the log. */
export type InFlightSummary = {
  readonly stepIndex: number;
  readonly resolution: string;
  readonly target: string;
  readonly action: unknown;
  readonly resultId: string;
  readonly replayPolicy: string;
  readonly modelText: string | null;
  /** A step with several calls: each call and where it stands; null for any other step. */
  readonly calls: readonly CallInFlightSummary[] | null;
};

/** An open request: what is asked, the recorded action, and the reply kinds it accepts. */
export type PendingSummary = {
  readonly resultId: string;
  readonly stepIndex: number;
  readonly kind: string;
  readonly target: string;
  readonly action: unknown;
  readonly accepts: readonly string[];
  readonly requestedAt: string | null;
  /** A sub-agent's request (kind `child`): what it really asks, in which run; null for the run's own. */
  readonly asked: AskedSummary | null;
};

/** The innermost request of a sub-agent's request, and the (sub-agent) run that asks it. */
export type AskedSummary = {
  readonly runId: string;
  readonly resultId: string;
  readonly stepIndex: number;
  readonly kind: string;
  readonly target: string;
  readonly action: unknown;
};

/**
 * Options of {@link summarizeRun}: the summary's fields that come from outside the log (the run's
 * parent and reply route only a source that reads other runs knows; default null).
 */
export type SummaryContext = Pick<RunSummary, 'runId' | 'status' | 'updatedAt' | 'answering'> &
  Partial<Pick<RunSummary, 'parentRunId' | 'replyTo'>>;

/** The run page's summary of a reading. */
export function summarizeRun(reading: LogReading, ctx: SummaryContext): RunSummary {
  const { view } = reading;
  const withUsage = view.trajectory.some((s) => s.usage !== null);
  const openRequests = view.openRequests.map((p) => pendingOf(reading, p));
  return {
    runId: ctx.runId,
    status: ctx.status,
    state: view.state,
    stopReason: view.ended?.stopReason ?? null,
    finalAnswer: view.ended?.finalAnswer ?? null,
    steps: view.steps,
    validActions: view.validActions,
    usage: withUsage ? view.usage : null,
    createdAt: view.started?.startedAt ?? null,
    updatedAt: ctx.updatedAt,
    error: reading.error,
    warnings: reading.warnings,
    lastSeq: reading.records.length - 1,
    span: { start: view.started?.startedAt || null, end: lastTime(view) },
    inFlight: inFlightOf(view),
    pending: openRequests[0] ?? null,
    openRequests,
    upgrades: upgradeSummaries(view),
    resumes: resumeSummaries(view),
    answering: ctx.answering,
    children: childRunsOf(view),
    parentRunId: ctx.parentRunId ?? null,
    replyTo: ctx.replyTo ?? null,
    forkedFrom: view.started?.forkedFrom ?? null,
    stopRequest: view.ended?.stopRequest ?? null,
  };
}

function lastTime(view: RunLogView): string | null {
  return view.ended?.endedAt || view.trajectory.at(-1)?.endedAt || view.started?.startedAt || null;
}

function inFlightOf(view: RunLogView): InFlightSummary | null {
  const f = view.inFlight;
  if (!f) return null;
  const intent = f.actionIntent ?? f.modelIntent;
  const action = f.actionIntent?.decision.action ?? f.request?.request.decision?.action ?? null;
  return {
    stepIndex: f.stepIndex,
    resolution: f.resolution,
    target: f.target,
    action,
    resultId: intent.resultId,
    replayPolicy: intent.replayPolicy,
    modelText: f.result?.reply.text ?? null,
    calls: f.calls ? callsInFlight(f.calls) : null,
  };
}

function pendingOf(reading: LogReading, p: InputRequest): PendingSummary {
  const f = reading.view.inFlight;
  const asked = (f?.calls?.calls ?? []).flatMap((c) => [c.gate, c.settle]).find((r) => r?.resultId === p.resultId);
  const request = asked ?? f?.request;
  const inner = askedIn(p);
  const leaf = inner.request;
  return {
    resultId: p.resultId,
    stepIndex: p.stepIndex,
    kind: p.kind,
    target: p.target,
    action: p.decision?.action ?? null,
    accepts: acceptedReplies(p),
    requestedAt: request?.requestedAt || null,
    asked:
      inner.runId === null
        ? null
        : {
            runId: inner.runId,
            resultId: leaf.resultId,
            stepIndex: leaf.stepIndex,
            kind: leaf.kind,
            target: leaf.target,
            action: leaf.decision?.action ?? null,
          },
  };
}

/** A step as the page shows it: the record, what a person was asked and replied, and how it was carried on. */
export type ViewStepRow = {
  readonly step: StepRecord;
  /** The action as recorded (its intent, or the request a person answered), with its arguments; null without one. */
  readonly action: Action | null;
  readonly input: readonly {
    readonly resultId: string;
    readonly kind: string;
    readonly requestedAt: string | null;
    readonly reply: unknown;
    readonly receivedAt: string | null;
  }[];
  /** Set when the log shows the step was carried on after a crash (a settlement), else null. */
  readonly resumed: string | null;
  /**
   * The driver session that carried the step out: 1 for the one that started the run, 2 for the
   * first that took it over (the summary's `resumes`), … A step taken over in flight counts to the later driver.
   */
  readonly driver: number;
  /** Characters of the observation left out of this answer (ask for the step alone to get them). */
  readonly observationClippedChars: number;
};

/** Observations longer than this are clipped in a page of steps. */
export const OBSERVATION_PAGE_CHARS = 20_000;

/** Steps `from` … `from + limit - 1` of a reading; `full` leaves observations whole. */
export function stepsPage(reading: LogReading, from: number, limit: number, full = false): readonly ViewStepRow[] {
  const extras = extrasOf(reading);
  const { resumes } = reading.view;
  return reading.view.trajectory
    .slice(from, from + limit)
    .map((step) => stepRow(step, extras.get(step.stepIndex), driverOf(resumes, step.stepIndex), full));
}

function stepRow(step: StepRecord, extra: StepExtras | undefined, driver: number, full: boolean): ViewStepRow {
  const observation = step.observation ?? '';
  const over = (text: string): number => (full ? 0 : Math.max(0, text.length - OBSERVATION_PAGE_CHARS));
  // A step with several calls: each call's observation is clipped the same way, the characters left out summed.
  const calls = step.calls?.map((c) =>
    over(c.observation) > 0 ? { ...c, observation: c.observation.slice(0, OBSERVATION_PAGE_CHARS) } : c,
  );
  const clipped = over(observation) + (step.calls ?? []).reduce((n, c) => n + over(c.observation), 0);
  const cut = clipped > 0 ? { ...step, observation: observation.slice(0, OBSERVATION_PAGE_CHARS) } : step;
  const shown = calls && clipped > 0 ? { ...cut, calls } : cut;
  const input = (extra?.requests ?? []).map((r) => {
    const reply = extra?.inputs.find((i) => i.resultId === r.resultId && i.stepIndex === r.stepIndex) ?? null;
    return {
      resultId: r.resultId,
      kind: r.request.kind,
      requestedAt: r.requestedAt || null,
      reply: reply?.reply ?? null,
      receivedAt: reply?.receivedAt || null,
    };
  });
  return {
    step: shown,
    action: extra?.action ?? null,
    input,
    resumed: resumedNote(extra),
    driver,
    observationClippedChars: clipped,
  };
}

/**
 * What the log proves about a step carried on after a crash: a settlement (a `never` operation
 * found in flight, settled by a person), and an operation announced twice (a settled retry).
 * Where any later driver took over (a `safe` operation replayed, a reply carried out) is the
 * `resumed` record's to say, since record version 1.2: the summary's `resumes`, the row's `driver`.
 */
function resumedNote(extra: StepExtras | undefined): string | null {
  const settle = extra?.requests.find((r) => r.request.kind === 'settle');
  if (!extra || !settle) return null;
  const reply = extra.inputs.find((i) => i.resultId === settle.resultId);
  const what = settle.request.target === 'action' ? 'the action' : 'the model call';
  const again = extra.modelIntents > 1 || extra.actionIntents > 1 ? ', announced again' : '';
  const by = reply?.reply.kind ?? 'no reply yet';
  return `resumed after a crash: ${what} was in flight and was settled by a person (${by})${again}`;
}

function extrasOf(reading: LogReading): ReadonlyMap<number, StepExtras> {
  const cached = extrasCache.get(reading);
  if (cached) return cached;
  const map = new Map<number, StepExtras>();
  const at = (i: number): StepExtras => {
    let e = map.get(i);
    if (!e) map.set(i, (e = { requests: [], inputs: [], modelIntents: 0, actionIntents: 0, action: null }));
    return e;
  };
  for (const r of reading.records) {
    if (r.kind === 'input_request') {
      const e = at(r.stepIndex);
      e.requests.push(r);
      e.action ??= r.request.decision?.action ?? null;
    } else if (r.kind === 'input') at(r.stepIndex).inputs.push(r);
    else if (r.kind === 'intent' && r.intent === 'model_call') at(r.stepIndex).modelIntents++;
    else if (r.kind === 'intent') {
      const e = at(r.stepIndex);
      e.actionIntents++;
      e.action = r.intent === 'action' ? r.decision.action : (r.decision.calls[0]?.action ?? null);
    }
  }
  extrasCache.set(reading, map);
  return map;
}

/** The run list's row of a reading. */
export function rowOf(reading: LogReading, runId: string, status: ViewStatus, updatedAt: string | null): ViewRunRow {
  return {
    runId,
    status,
    stopReason: reading.view.ended?.stopReason ?? null,
    steps: reading.view.steps,
    createdAt: reading.view.started?.startedAt ?? null,
    updatedAt,
    error: reading.error,
  };
}

/** The viewer's status of a FileStore run: a readable log's state, with a live lock holder meaning running. */
export function dirStatus(reading: LogReading, driverPid: number | null): ViewStatus {
  if (reading.error !== null) return 'corrupt';
  if (reading.view.state === 'ended') return 'ended';
  if (reading.view.state === 'awaiting_input') return 'awaiting_input';
  return driverPid !== null ? 'running' : 'interrupted';
}
