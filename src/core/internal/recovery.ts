/**
 * Recovery (pure, sync): classify a run log (SPEC §5, §7) and compare parameter snapshots.
 * @module
 */
import { CorruptLogError } from '../errors.ts';
import type {
  ActionIntentRecord,
  InFlightStep,
  JsonValue,
  LogRecord,
  ModelCallIntentRecord,
  ResultRecord,
  RunEndedRecord,
  RunLogState,
  RunStartedRecord,
  StepRecord,
} from '../types.ts';

/** What a log says about its run, before counting (see `readRunLog` in `run-log.ts`). */
export type LogClass = {
  readonly state: RunLogState;
  readonly started: RunStartedRecord | null;
  readonly steps: readonly StepRecord[];
  readonly inFlight: InFlightStep | null;
  readonly ended: RunEndedRecord | null;
};

const corrupt = (index: number, reason: string): CorruptLogError => new CorruptLogError(index + 1, reason, { source: 'run log' });

/**
 * Classify a decoded log and decide how an interrupted step goes on (SPEC §5): a model-call
 * intent without its result is re-issued (`safe`) or settled (`never`); a result without an
 * action intent is re-interpreted (nothing ran yet); an action intent without its step is
 * executed again (`safe`) or settled (`never`). Throws `CorruptLogError` (record number,
 * 1-based) when the records do not follow the write protocol: no `run_started` first, records
 * after `run_ended`, steps out of order, a result or action intent without the intent before it.
 */
export function classifyLog(log: readonly LogRecord[]): LogClass {
  if (log.length === 0) return { state: 'not_started', started: null, steps: [], inFlight: null, ended: null };
  const first = log[0] as LogRecord;
  if (first.kind !== 'run_started') throw corrupt(0, `first record is ${first.kind}, not run_started`);
  const steps: StepRecord[] = [];
  let modelIntent: ModelCallIntentRecord | null = null;
  let result: ResultRecord | null = null;
  let action: ActionIntentRecord | null = null;
  for (let i = 1; i < log.length; i++) {
    const rec = log[i] as LogRecord;
    const next = steps.length;
    switch (rec.kind) {
      case 'run_started':
        throw corrupt(i, 'a second run_started record');
      case 'run_ended':
        if (i !== log.length - 1) throw corrupt(i + 1, 'records after run_ended');
        return { state: 'ended', started: first, steps, inFlight: null, ended: rec };
      case 'intent':
        if (rec.stepIndex !== next) throw corrupt(i, `intent for step ${rec.stepIndex} while step ${next} is next`);
        if (rec.intent === 'model_call') {
          if (modelIntent) throw corrupt(i, `a second model-call intent for step ${rec.stepIndex}`);
          modelIntent = rec;
        } else {
          if (!result) throw corrupt(i, 'an action intent without a model result before it');
          if (action) throw corrupt(i, 'a second action intent for the same step');
          action = rec;
        }
        break;
      case 'result':
        if (!modelIntent || rec.resultId !== modelIntent.resultId) throw corrupt(i, `result ${rec.resultId} without its model-call intent`);
        if (result) throw corrupt(i, `a second result for ${rec.resultId}`);
        result = rec;
        break;
      case 'step':
        if (rec.step.stepIndex !== next) throw corrupt(i, `step ${rec.step.stepIndex} while step ${next} is next`);
        if (!modelIntent) throw corrupt(i, `step ${next} without its model-call intent`);
        if (rec.actionResult !== null && !action) throw corrupt(i, `step ${next} holds an action result without its action intent`);
        steps.push(rec.step);
        modelIntent = result = action = null;
        break;
    }
  }
  if (!modelIntent) return { state: 'at_boundary', started: first, steps, inFlight: null, ended: null };
  return { state: 'in_flight', started: first, steps, inFlight: inFlightStep(modelIntent, result, action), ended: null };
}

function inFlightStep(modelIntent: ModelCallIntentRecord, result: ResultRecord | null, actionIntent: ActionIntentRecord | null): InFlightStep {
  const base = { stepIndex: modelIntent.stepIndex, modelIntent, result, actionIntent };
  if (actionIntent) return { ...base, target: 'action', resolution: actionIntent.replayPolicy === 'never' ? 'settle' : 'replay_action' };
  if (result) return { ...base, target: 'model_call', resolution: 'reinterpret' };
  return { ...base, target: 'model_call', resolution: modelIntent.replayPolicy === 'never' ? 'settle' : 'reissue_model' };
}

/**
 * Dotted paths at which two snapshots differ, sorted; `[]` when equal. Arrays compare by
 * index (`tools.1.description`); a path present on one side only is listed too.
 */
export function diffSnapshots(stored: JsonValue, current: JsonValue): string[] {
  const out: string[] = [];
  diff(stored, current, '', out);
  // Keys added to the snapshot after 1.0 that an older writer never recorded: not a difference.
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
  const left = a as Record<string, JsonValue>;
  const right = b as Record<string, JsonValue>;
  if (bothArrays && (a as readonly JsonValue[]).length !== (b as readonly JsonValue[]).length) {
    out.push(path || '(root)');
    return;
  }
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) diff(left[key], right[key], path ? `${path}.${key}` : key, out);
}

function isObject(v: JsonValue | undefined): v is { readonly [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
