/**
 * Spans as plain lines a test can compare, keep in memory or append to a file: a span processor
 * that records every span when it starts and when it ends (a span a crash left open has a start
 * line and no end line), and the W3C `traceparent` read back into ids.
 */
import { appendFileSync } from 'node:fs';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/** One span at its start or its end. `status`: 0 unset, 1 ok, 2 error. */
export type SpanLine = {
  readonly phase: 'start' | 'end';
  readonly name: string;
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly status: number;
};

export function spanLine(phase: SpanLine['phase'], span: ReadableSpan): SpanLine {
  const { traceId, spanId } = span.spanContext();
  return {
    phase,
    name: span.name,
    kind: span.kind,
    traceId,
    spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
    attributes: { ...span.attributes },
    status: span.status.code,
  };
}

/** Records each span's start and end as a {@link SpanLine}, in memory and, with `file`, as an NDJSON line there. */
export class LineProcessor implements SpanProcessor {
  readonly lines: SpanLine[] = [];
  readonly #file: string | undefined;

  constructor(file?: string) {
    this.#file = file;
  }

  onStart(span: Span): void {
    this.#add(spanLine('start', span));
  }

  onEnd(span: ReadableSpan): void {
    this.#add(spanLine('end', span));
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }

  /** The spans that ended, as they ended. */
  get ended(): SpanLine[] {
    return this.lines.filter((l) => l.phase === 'end');
  }

  /** The spans that started (open or ended), as they started. */
  get started(): SpanLine[] {
    return this.lines.filter((l) => l.phase === 'start');
  }

  #add(line: SpanLine): void {
    this.lines.push(line);
    // Synchronous: a line written before a SIGKILL is on disk after it.
    if (this.#file !== undefined) appendFileSync(this.#file, `${JSON.stringify(line)}\n`);
  }
}

/** The trace and span ids of a W3C `traceparent` (`00-{trace id}-{span id}-{flags}`). */
export function traceparentIds(traceparent: string): { readonly traceId: string; readonly spanId: string } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(traceparent);
  if (m === null) throw new Error(`not a traceparent: ${traceparent}`);
  return { traceId: m[1] as string, spanId: m[2] as string };
}
