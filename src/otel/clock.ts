/**
 * The times the sink gives its spans. Each span gets an explicit start and end (a capturing sink
 * ends a `chat` span after its call did: docs/decisions/0079-otel-sink.md#content), read from one
 * clock per driver that reads like the SDK's own: the wall clock when the driver's span opens,
 * then the monotonic `performance.now()` from there, to the microsecond. A wall clock that is set
 * back while a run goes on does not make a span end before it started.
 * @module
 */
import type { HrTime } from '@opentelemetry/api';

/** A clock for one driver session: now, as `[seconds, nanoseconds]` since the epoch. */
export function driverClock(): () => HrTime {
  const perf = (globalThis as { performance?: { now(): number } }).performance;
  if (typeof perf?.now !== 'function') return () => hrTime(Date.now());
  const wall = Date.now();
  const start = perf.now();
  return () => hrTime(wall + (perf.now() - start));
}

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6));
  return [seconds, nanos];
}
