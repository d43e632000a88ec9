/**
 * Tracing for a Node process: a tracer provider that sends every span to an OpenTelemetry
 * collector over OTLP/HTTP (JSON). The exporter finds the collector the standard way:
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL), else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`,
 * else `http://localhost:4318/v1/traces`.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Tracer } from '@opentelemetry/api';

export type Tracing = {
  readonly tracer: Tracer;
  /** Send what is still queued, then stop: call it before the process exits. */
  readonly shutdown: () => Promise<void>;
};

export function startTracing(): Tracing {
  const provider = new BasicTracerProvider({
    // Batched: spans leave in the background, a few at a time, not one request per span.
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  return { tracer: provider.getTracer('polyloop-example'), shutdown: () => provider.shutdown() };
}
