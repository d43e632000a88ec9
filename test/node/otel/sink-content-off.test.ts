/**
 * otelSink without captureContent puts nothing a seam said anywhere on its spans: a model error or
 * a store failure often quotes the prompt, the reply or a record, so a span's status message holds
 * it only when content is captured; `error.type` (the error's class) is always there.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { InMemoryStore, run } from '../../../src/core/index.ts';
import { otelSink } from '../../../src/otel/index.ts';
import { only, tracedAgent, tracing } from './sink-fixtures.ts';

const SECRET = 'the-users-password-hunter2';
const SCRIPT = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];

class ProviderError extends Error {}

describe('otelSink: content off keeps error messages out of spans', () => {
  it("leaves a failed model call's status without the error's message, which may quote the prompt", async () => {
    for (const captureContent of [false, true]) {
      const t = tracing();
      const script = (): never => {
        throw new ProviderError(`content filter hit on: ${SECRET}`);
      };
      const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer, captureContent }), { script });
      expect((await run(agent, request)).stopReason).toBe('model_error');
      const chat = only(t.spans(), 'chat scripted');
      expect(chat.status.code).toBe(SpanStatusCode.ERROR);
      expect(chat.attributes['error.type']).toBe('ProviderError');
      expect(JSON.stringify(t.spans().map((s) => [s.status, s.attributes, s.events])).includes(SECRET)).toBe(
        captureContent,
      );
    }
  });

  it("leaves a rejected driver's status without the failure's message, which may quote a record", async () => {
    for (const captureContent of [false, true]) {
      const t = tracing();
      // Its step write fails as a store whose record would not serialize might say.
      const failing = new InMemoryStore();
      failing.step = () => Promise.reject(new SyntaxError(`bad JSON near "${SECRET}"`));
      const { agent, request } = tracedAgent(otelSink({ tracer: t.tracer, captureContent }), {
        script: SCRIPT,
        store: failing as never,
      });
      await expect(run(agent, request)).rejects.toMatchObject({ name: 'StoreError' });
      const root = only(t.spans(), 'invoke_agent');
      expect(root.status.code).toBe(SpanStatusCode.ERROR);
      expect(root.attributes['error.type']).toBe('StoreError');
      expect(JSON.stringify(t.spans().map((s) => [s.status, s.attributes, s.events])).includes(SECRET)).toBe(
        captureContent,
      );
    }
  });
});
