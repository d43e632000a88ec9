/**
 * The W3C trace context header value (https://www.w3.org/TR/trace-context/#traceparent-header)
 * written to `run_started.traceparent` and read back by later drivers.
 * @module
 */
import { isSpanContextValid } from '@opentelemetry/api';
import type { SpanContext } from '@opentelemetry/api';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** `00-{traceId}-{spanId}-{flags}`, or undefined for a span context that names no span (a no-op tracer's). */
export function formatTraceparent(sc: SpanContext): string | undefined {
  if (!isSpanContextValid(sc)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The remote span context a traceparent names, or null for a value that is none (or names no span). */
export function parseTraceparent(value: string | undefined): SpanContext | null {
  const m = value === undefined ? null : TRACEPARENT.exec(value);
  if (!m) return null;
  const sc = { traceId: m[1] as string, spanId: m[2] as string, traceFlags: Number.parseInt(m[3] as string, 16) };
  return isSpanContextValid(sc) ? { ...sc, isRemote: true } : null;
}
