/**
 * What a driver writes and tells when it takes a run (docs/log-format.md): the first driver's
 * `run_started` record, with the trace context its sink opened; a later driver's `resumed` mark,
 * where it took the run over; and the `run_started` event either gives its sink.
 * @module
 */
import { sha256Hex } from './snapshot.ts';
import { now } from './step-record.ts';
import { RECORD_VERSION } from './types.ts';
import type {
  Decision,
  InFlightStep,
  ParamSnapshot,
  ResumedRecord,
  RunEvent,
  RunLogView,
  RunStartedRecord,
  StoredRequest,
} from './types.ts';

/**
 * The run's first record, with the hash of its snapshot (of `snapshotText`, the snapshot's canonical
 * JSON) and the trace context `traceparent()` gives (asked once, after the hash, just before the
 * record is written), if it gives one.
 */
export async function startedRecord(
  runId: string,
  start: { readonly snapshot: ParamSnapshot; readonly snapshotText: string; readonly request: StoredRequest },
  traceparent: () => string | null,
): Promise<RunStartedRecord> {
  const { snapshot, request } = start;
  const snapshotHash = await sha256Hex(start.snapshotText);
  const tp = traceparent();
  const traced = tp === null ? {} : { traceparent: tp };
  return {
    kind: 'run_started',
    v: RECORD_VERSION,
    runId,
    snapshot,
    snapshotHash,
    request,
    ...traced,
    startedAt: now(),
  };
}

/**
 * The mark of a driver that carries a run on: the step it carries on (the next one at a boundary)
 * and how that step's interrupted work goes on (`readRunLog`'s resolution; null at a boundary).
 */
export function takeoverMark(inFlight: InFlightStep | null, fromStep: number): ResumedRecord {
  const stepIndex = inFlight?.stepIndex ?? fromStep;
  return { kind: 'resumed', v: RECORD_VERSION, stepIndex, resolution: inFlight?.resolution ?? null, at: now() };
}

/**
 * The `run_started` event: on a resume, the first driver's trace context from the log and how the
 * interrupted step goes on (null at a boundary), so a sink can link this driver's span to the first.
 */
export function startedEvent(view: RunLogView, runId: string, fromStep: number): RunEvent {
  if (view.state === 'not_started') return { type: 'run_started', runId, resumed: false, fromStep };
  const traceparent = view.started?.traceparent;
  const traced = traceparent === undefined ? {} : { traceparent };
  const resolution = view.inFlight?.resolution ?? null;
  return { type: 'run_started', runId, resumed: true, fromStep, resolution, ...traced };
}

/** The decision an interrupted step recorded (its action intent's, or its input request's), if any. */
export function recordedDecision(inFlight: InFlightStep | null): Decision | null {
  if (inFlight === null) return null;
  if (inFlight.calls) return inFlight.calls.intent.decision;
  const { actionIntent, request } = inFlight;
  return actionIntent?.decision ?? (request?.request.kind === 'settle' ? null : request?.request.decision) ?? null;
}
