/**
 * Recovery (pure, sync): classify a run log (docs/design/records-and-recovery.md#log-states) and
 * compare parameter snapshots.
 * @module
 */
import { CorruptLogError } from '../errors.ts';
import type {
  ActionIntentRecord,
  InFlightResolution,
  InFlightStep,
  InputRecord,
  InputRequest,
  InputRequestRecord,
  JsonValue,
  LogRecord,
  ModelCallIntentRecord,
  ResultRecord,
  RunEndedRecord,
  RunLogState,
  RunStartedRecord,
  StepRecord,
  UpgradeRecord,
} from '../types.ts';

/** What a log says about its run, before counting (see `readRunLog` in `run-log.ts`). */
export type LogClass = {
  readonly state: RunLogState;
  readonly started: RunStartedRecord | null;
  readonly steps: readonly StepRecord[];
  readonly inFlight: InFlightStep | null;
  readonly pending: InputRequest | null;
  readonly upgrades: readonly UpgradeRecord[];
  readonly ended: RunEndedRecord | null;
};

const corrupt = (index: number, reason: string): CorruptLogError =>
  new CorruptLogError(index + 1, reason, { source: 'run log' });

type Exchange = { request: InputRequestRecord; input: InputRecord | null };

/** The records of the step being written, as the protocol lets them arrive. */
class StepTrack {
  modelIntent: ModelCallIntentRecord | null = null;
  result: ResultRecord | null = null;
  actionIntent: ActionIntentRecord | null = null;
  /** The approval or answer (`s{i}.input`) of this step. */
  gate: Exchange | null = null;
  /** The latest settlement (`s{i}.settle`); cleared when a retry writes its intent again. */
  settlement: Exchange | null = null;

  open(): Exchange | null {
    if (this.settlement && !this.settlement.input) return this.settlement;
    if (this.gate && !this.gate.input) return this.gate;
    return null;
  }
}

/**
 * Classify a decoded log and decide how an interrupted step goes on
 * (docs/design/records-and-recovery.md#the-interrupted-step): a model-call intent without its
 * result is re-issued (`safe`) or settled by a person (`never`); a result without an action intent
 * is re-interpreted (nothing ran yet); an action intent without its step is executed again (`safe`)
 * or settled (`never`); an unanswered input request awaits input; a reply with nothing after it is
 * carried out. Throws `CorruptLogError` (record number, 1-based) when the records do not follow the
 * write protocol.
 */
export function classifyLog(log: readonly LogRecord[]): LogClass {
  if (log.length === 0)
    return { state: 'not_started', started: null, steps: [], inFlight: null, pending: null, upgrades: [], ended: null };
  const first = log[0] as LogRecord;
  if (first.kind !== 'run_started') throw corrupt(0, `first record is ${first.kind}, not run_started`);
  const steps: StepRecord[] = [];
  const upgrades: UpgradeRecord[] = [];
  let t = new StepTrack();
  for (let i = 1; i < log.length; i++) {
    const rec = log[i] as LogRecord;
    if (rec.kind === 'run_started') throw corrupt(i, 'a second run_started record');
    if (rec.kind === 'run_ended') {
      if (i !== log.length - 1) throw corrupt(i + 1, 'records after run_ended');
      return { state: 'ended', started: first, steps, inFlight: null, pending: null, upgrades, ended: rec };
    }
    const next = steps.length;
    const index = rec.kind === 'step' ? rec.step.stepIndex : rec.stepIndex;
    if (index !== next) throw corrupt(i, `${rec.kind} for step ${index} while step ${next} is next`);
    // An upgrade may come between any two records of a step: resume writes it wherever the run stopped.
    if (rec.kind === 'upgrade') {
      upgrades.push(rec);
      continue;
    }
    if (rec.kind !== 'intent' || rec.intent !== 'model_call') {
      if (!t.modelIntent) throw corrupt(i, `${rec.kind} of step ${next} without its model-call intent`);
    }
    const open = t.open();
    switch (rec.kind) {
      case 'intent':
        if (open) throw corrupt(i, `an intent while input request ${open.request.resultId} is open`);
        if (rec.intent === 'model_call') acceptModelIntent(t, rec, i);
        else acceptActionIntent(t, rec, i);
        break;
      case 'result':
        if (rec.resultId !== t.modelIntent?.resultId)
          throw corrupt(i, `result ${rec.resultId} without its model-call intent`);
        if (t.result) throw corrupt(i, `a second result for ${rec.resultId}`);
        if (open || t.settlement) throw corrupt(i, `result ${rec.resultId} while its settlement is unresolved`);
        t.result = rec;
        break;
      case 'input_request':
        if (open) throw corrupt(i, `input request ${rec.resultId} while ${open.request.resultId} is open`);
        acceptRequest(t, rec, i);
        break;
      case 'input':
        if (!open || open.request.resultId !== rec.resultId)
          throw corrupt(i, `input for ${rec.resultId}, which is not the open request`);
        open.input = rec;
        break;
      case 'step':
        if (open) throw corrupt(i, `step ${next} while input request ${open.request.resultId} is open`);
        if (rec.actionResult !== null && !t.actionIntent && t.gate?.input?.reply.kind !== 'answer') {
          throw corrupt(i, `step ${next} holds an action result without its action intent`);
        }
        if (statusProblem(rec) !== null) throw corrupt(i, `step ${next} ${statusProblem(rec)}`);
        steps.push(rec.step);
        t = new StepTrack();
        break;
    }
  }
  return finish(first, steps, upgrades, t);
}

/**
 * Readers count a step's `actionStatus` (valid actions, the viewer): it must be what its action
 * result says, and a step without one ran nothing (`denied`, or no action status).
 */
function statusProblem(rec: Extract<LogRecord, { kind: 'step' }>): string | null {
  const status = rec.step.actionStatus;
  if (rec.actionResult === null)
    return status === null || status === 'denied' ? null : `says ${status} but holds no action result`;
  return status === rec.actionResult.outcome.status
    ? null
    : `says ${String(status)} but its action result is ${rec.actionResult.outcome.status}`;
}

function acceptModelIntent(t: StepTrack, rec: ModelCallIntentRecord, i: number): void {
  if (t.modelIntent) {
    // Written again only to retry a settled model call (the attempt's own barrier).
    if (
      t.result ||
      t.settlement?.request.request.target !== 'model_call' ||
      t.settlement.input?.reply.kind !== 'retry'
    ) {
      throw corrupt(i, `a second model-call intent for step ${rec.stepIndex}`);
    }
    t.settlement = null;
  }
  t.modelIntent = rec;
}

function acceptActionIntent(t: StepTrack, rec: ActionIntentRecord, i: number): void {
  if (!t.result) throw corrupt(i, 'an action intent without a model result before it');
  if (t.actionIntent) {
    if (t.settlement?.request.request.target !== 'action' || t.settlement.input?.reply.kind !== 'retry')
      throw corrupt(i, 'a second action intent for the same step');
    // A retry runs again what the person was shown: the action in flight, not another one.
    if (!sameJson(rec.decision, t.actionIntent.decision))
      throw corrupt(i, `the retried action of step ${rec.stepIndex} is not the action that was settled`);
    t.settlement = null;
  } else if (t.gate) {
    if (t.gate.input?.reply.kind !== 'approve')
      throw corrupt(i, `an action intent although ${t.gate.request.resultId} was not approved`);
    // What runs is what the person approved: a log that swaps the arguments after the approval is forged.
    if (!sameJson(rec.decision, t.gate.request.request.decision))
      throw corrupt(
        i,
        `the action intent of step ${rec.stepIndex} is not the decision approved in ${t.gate.request.resultId}`,
      );
  }
  t.actionIntent = rec;
}

function acceptRequest(t: StepTrack, rec: InputRequestRecord, i: number): void {
  const { kind, target } = rec.request;
  if (kind === 'settle') {
    const due = target === 'model_call' ? !t.result : t.actionIntent !== null;
    if (!due)
      throw corrupt(
        i,
        `a settle request of the ${target === 'action' ? 'action' : 'model call'} of step ${rec.stepIndex}, ` +
          'which is not in flight',
      );
    // The person settles the action shown to them; it must be the one in flight.
    const shown = rec.request.decision;
    if (target === 'action' && !sameJson(shown, t.actionIntent?.decision ?? null))
      throw corrupt(i, `the settle request of step ${rec.stepIndex} shows another action than the one in flight`);
    if (target === 'model_call' && shown !== null)
      throw corrupt(i, `the settle request of the model call of step ${rec.stepIndex} holds a decision`);
    t.settlement = { request: rec, input: null };
  } else {
    const what = kind === 'approval' ? 'an approval' : 'an answer';
    if (!t.result || t.actionIntent || t.gate)
      throw corrupt(i, `${what} request out of place in step ${rec.stepIndex}`);
    // A person approves or answers the action shown to them: one that shows none is no approval of anything.
    if (target !== 'action' || rec.request.decision === null)
      throw corrupt(i, `${what} request of step ${rec.stepIndex} that shows no action`);
    t.gate = { request: rec, input: null };
  }
}

function finish(
  started: RunStartedRecord,
  steps: readonly StepRecord[],
  upgrades: readonly UpgradeRecord[],
  t: StepTrack,
): LogClass {
  const { modelIntent, result, actionIntent } = t;
  if (!modelIntent)
    return { state: 'at_boundary', started, steps, inFlight: null, pending: null, upgrades, ended: null };
  const open = t.open();
  const answered = t.settlement?.input ? t.settlement : t.gate?.input && !actionIntent ? t.gate : null;
  const exchange = open ?? answered;
  let resolution: InFlightResolution;
  if (open) resolution = 'await_input';
  else if (answered) resolution = 'apply_input';
  else if (!result) resolution = modelIntent.replayPolicy === 'never' ? 'settle' : 'reissue_model';
  else if (!actionIntent) resolution = 'reinterpret';
  else resolution = actionIntent.replayPolicy === 'never' ? 'settle' : 'replay_action';
  const target = actionIntent || (result && exchange?.request.request.target === 'action') ? 'action' : 'model_call';
  const inFlight: InFlightStep = {
    stepIndex: modelIntent.stepIndex,
    resolution,
    target: exchange ? exchange.request.request.target : target,
    modelIntent,
    result,
    actionIntent,
    request: exchange?.request ?? null,
    input: exchange?.input ?? null,
    approval: t.gate?.input ?? null,
  };
  // Known keys only: unknown keys a request record keeps must not stand in for the record's own.
  const q = open?.request.request;
  const pending: InputRequest | null =
    open && q
      ? {
          resultId: open.request.resultId,
          stepIndex: open.request.stepIndex,
          kind: q.kind,
          target: q.target,
          decision: q.decision,
        }
      : null;
  return { state: open ? 'awaiting_input' : 'in_flight', started, steps, inFlight, pending, upgrades, ended: null };
}

/**
 * Dotted paths at which two snapshots differ, sorted; `[]` when equal. Arrays of uniquely named
 * objects (tools, injection entries) compare by name (`tools[search].description`), other arrays
 * by index (`context.run.0.content`); a path present on one side only is listed too.
 */
export function diffSnapshots(stored: JsonValue, current: JsonValue): string[] {
  const out: string[] = [];
  diff(stored, current, '', out);
  // A key a 1.0 writer did not record is no difference when the stored snapshot lacks it.
  const lacks = (key: string): boolean => isObject(stored) && !(key in stored);
  return out.filter((path) => !(ADDED_AFTER_1_0.includes(path) && lacks(path))).sort();
}

/** Top-level snapshot keys a 1.0 writer did not record. */
const ADDED_AFTER_1_0: readonly string[] = ['executorReplayPolicy'];

function diff(a: JsonValue | undefined, b: JsonValue | undefined, path: string, out: string[]): void {
  if (a === b) return;
  const bothArrays = Array.isArray(a) && Array.isArray(b);
  const bothObjects = isObject(a) && isObject(b);
  if (!bothArrays && !bothObjects) {
    out.push(path || '(root)');
    return;
  }
  if (bothArrays) {
    const l = namesOf(a as readonly JsonValue[]);
    const r = namesOf(b as readonly JsonValue[]);
    if (l !== null && r !== null)
      return diffNamed(a as readonly JsonValue[], l, b as readonly JsonValue[], r, path, out);
  }
  const left = a as Record<string, JsonValue>;
  const right = b as Record<string, JsonValue>;
  if (bothArrays && (a as readonly JsonValue[]).length !== (b as readonly JsonValue[]).length) {
    out.push(path || '(root)');
    return;
  }
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) diff(left[key], right[key], path ? `${path}.${key}` : key, out);
}

/**
 * The `name` of every element, when each is an object with a unique string name (tools, injection entries); else null.
 */
function namesOf(items: readonly JsonValue[]): string[] | null {
  const names = items.map((item) => (isObject(item) && typeof item['name'] === 'string' ? item['name'] : null));
  return names.every((n): n is string => n !== null) && new Set(names).size === names.length ? names : null;
}

/**
 * Named elements compare by name (`tools[search].description`): one added or removed is named
 * itself, and the same names in another order name the array (order is part of the prompt).
 */
function diffNamed(
  a: readonly JsonValue[],
  l: readonly string[],
  b: readonly JsonValue[],
  r: readonly string[],
  path: string,
  out: string[],
): void {
  const at = (name: string): string => `${path || '(root)'}[${name}]`;
  for (const name of new Set([...l, ...r])) {
    const i = l.indexOf(name);
    const j = r.indexOf(name);
    if (i < 0 || j < 0) out.push(at(name));
    else diff(a[i], b[j], at(name), out);
  }
  const common = (names: readonly string[], other: readonly string[]): string[] =>
    names.filter((n) => other.includes(n));
  if (common(l, r).join('\u0000') !== common(r, l).join('\u0000')) out.push(path || '(root)');
}

function isObject(v: JsonValue | undefined): v is { readonly [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deeper than any record the library writes (values inside records nest at most 100 levels). */
const SAME_JSON_DEPTH = 200;

/**
 * Whether two decoded JSON values are equal: the same scalars, arrays of equal items in order,
 * objects with the same keys (in any order) and equal values. For values read from a log.
 */
function sameJson(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  // Deeper than any value the library stores: not equal, rather than a stack overflow on a planted log.
  if (Array.isArray(a) !== Array.isArray(b) || depth > SAME_JSON_DEPTH) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameJson(item, other[i], depth + 1));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  return (
    keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && sameJson(x[k], y[k], depth + 1))
  );
}
