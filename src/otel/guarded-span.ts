/**
 * Spans the sink can always close: the tracer is the application's, and a span whose methods throw
 * (a broken exporter hook, a tracer of another shape) must not leave the sink's other spans open
 * or its per-run state behind (docs/decisions/0079-otel-sink.md#a-tracer-that-fails).
 * @module
 */
import { INVALID_SPAN_CONTEXT, trace } from '@opentelemetry/api';
import type {
  AttributeValue,
  Attributes,
  Context,
  Exception,
  Link,
  Span,
  SpanContext,
  SpanOptions,
  SpanStatus,
  TimeInput,
  Tracer,
} from '@opentelemetry/api';

/**
 * `tracer.startSpan`, its span wrapped so that none of its methods throws; an answer that is no
 * span (null) becomes a span that records nothing. What `startSpan` itself throws is thrown on:
 * the delivery it happened in counts as failed.
 */
export function startSpan(tracer: Tracer, name: string, options: SpanOptions, parent: Context): Span {
  const span: unknown = tracer.startSpan(name, options, parent);
  if (typeof span !== 'object' || span === null) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
  return new GuardedSpan(span as Span);
}

class GuardedSpan implements Span {
  readonly #span: Span;

  constructor(span: Span) {
    this.#span = span;
  }

  spanContext(): SpanContext {
    try {
      const sc = this.#span.spanContext();
      return typeof sc === 'object' && sc !== null ? sc : INVALID_SPAN_CONTEXT;
    } catch {
      return INVALID_SPAN_CONTEXT;
    }
  }

  setAttribute(key: string, value: AttributeValue): this {
    return this.#try(() => this.#span.setAttribute(key, value));
  }

  setAttributes(attributes: Attributes): this {
    return this.#try(() => this.#span.setAttributes(attributes));
  }

  addEvent(name: string, attributes?: Attributes | TimeInput, time?: TimeInput): this {
    return this.#try(() => this.#span.addEvent(name, attributes, time));
  }

  addLink(link: Link): this {
    return this.#try(() => this.#span.addLink(link));
  }

  addLinks(links: Link[]): this {
    return this.#try(() => this.#span.addLinks(links));
  }

  setStatus(status: SpanStatus): this {
    return this.#try(() => this.#span.setStatus(status));
  }

  updateName(name: string): this {
    return this.#try(() => this.#span.updateName(name));
  }

  end(endTime?: TimeInput): void {
    this.#try(() => this.#span.end(endTime));
  }

  isRecording(): boolean {
    try {
      return this.#span.isRecording() === true;
    } catch {
      return false;
    }
  }

  recordException(exception: Exception, time?: TimeInput): void {
    this.#try(() => this.#span.recordException(exception, time));
  }

  #try(fn: () => unknown): this {
    try {
      fn();
    } catch {
      // The application's span failed; the sink's other spans and its run state must not.
    }
    return this;
  }
}
