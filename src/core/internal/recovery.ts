/**
 * Recovery (pure, sync): classify a run log (SPEC §5, §7) and compare parameter snapshots.
 * @module
 */
import { CorruptLogError } from '../errors.ts';
import type {
  ActionIntentRecord,
  JsonValue,
  LogRecord,
  ModelCallIntentRecord,
  ResultRecord,
  RunEndedRecord,
  RunStartedRecord,
  StepRecord,
} from '../types.ts';

/** Where an interrupted step stopped. */
export type InFlight =
  /** A model-call intent without its result: re-issue (`safe`) or end `in_flight_unknown` (`never`). */
  | { readonly phase: 'model_call'; readonly intent: ModelCallIntentRecord }
  /** A model result but no action intent: re-interpret the stored reply (nothing ran yet). */
  | { readonly phase: 'interpret'; readonly intent: ModelCallIntentRecord; readonly result: ResultRecord }
  /** An action intent without its step: execute again (`safe`) or end `in_flight_unknown` (`never`). */
  | { readonly phase: 'action'; readonly intent: ModelCallIntentRecord; readonly result: ResultRecord; readonly action: ActionIntentRecord };

/** What a log says about its run. */
export type LogState =
  | { readonly kind: 'not_started' }
  | { readonly kind: 'ended'; readonly started: RunStartedRecord; readonly steps: readonly StepRecord[]; readonly ended: RunEndedRecord }
  | { readonly kind: 'boundary'; readonly started: RunStartedRecord; readonly steps: readonly StepRecord[] }
  | { readonly kind: 'in_flight'; readonly started: RunStartedRecord; readonly steps: readonly StepRecord[]; readonly inFlight: InFlight };

const corrupt = (index: number, reason: string): CorruptLogError => new CorruptLogError(index + 1, reason, { source: 'run log' });

/**
 * Classify a decoded log. Throws `CorruptLogError` (record number, 1-based) when the records do
 * not follow the write protocol: no `run_started` first, records after `run_ended`, steps out of
 * order, a result or action intent without the intent before it.
 */
export function classifyLog(log: readonly LogRecord[]): LogState {
  if (log.length === 0) return { kind: 'not_started' };
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
        return { kind: 'ended', started: first, steps, ended: rec };
      case 'intent':
        if (rec.stepIndex !== next) throw corrupt(i, `intent for step ${rec.stepIndex} while step ${next} is next`);
        if (rec.intent === 'model_call') {
          if (result) throw corrupt(i, 'a model-call intent after the model result of the same step');
          modelIntent = rec;
        } else {
          if (!result) throw corrupt(i, 'an action intent without a model result before it');
          action = rec;
        }
        break;
      case 'result':
        if (!modelIntent || rec.resultId !== modelIntent.resultId) throw corrupt(i, `result ${rec.resultId} without its model-call intent`);
        result = rec;
        break;
      case 'step':
        if (rec.step.stepIndex !== next) throw corrupt(i, `step ${rec.step.stepIndex} while step ${next} is next`);
        steps.push(rec.step);
        modelIntent = result = action = null;
        break;
    }
  }
  if (!modelIntent) return { kind: 'boundary', started: first, steps };
  let inFlight: InFlight;
  if (action && result) inFlight = { phase: 'action', intent: modelIntent, result, action };
  else if (result) inFlight = { phase: 'interpret', intent: modelIntent, result };
  else inFlight = { phase: 'model_call', intent: modelIntent };
  return { kind: 'in_flight', started: first, steps, inFlight };
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
