/**
 * A custom executor next to the request's tools: a tool's replay policy holds, and only tool calls
 * that validate reach it.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { ActionExecutor } from '../../../src/core/index.ts';
import { faultyStore, SimulatedCrashError } from '../../../src/testing/index.ts';
import { harness, makeTools } from './fixtures.ts';

describe("a tool's replay policy holds under a custom executor", () => {
  const customExecutor = (replayPolicy: 'safe' | 'never' | undefined, ran: string[]): ActionExecutor => {
    const inner = ToolRegistry.of(makeTools(ran)).executor();
    return { ...(replayPolicy ? { replayPolicy } : {}), execute: (a, ctx) => inner.execute(a, ctx) };
  };

  it('a never tool is recorded never and not re-run after a crash (a person settles it), even when the executor says safe', async () => {
    const ran: string[] = [];
    const inner = new InMemoryStore();
    // Writes: run_started, model intent, result + action intent land; the tool runs; the step write crashes.
    const h = harness({
      store: faultyStore(inner, { crashAfterWrites: 3 }),
      script: ['{"tool":"note","args":{"text":"once"}}', '{"final":"x"}'],
    });
    const request = { ...h.request, executor: customExecutor('safe', ran) };
    await expect(run(h.agent, request)).rejects.toMatchObject({ cause: expect.any(SimulatedCrashError) });
    const intent = (await inner.readLog('run-1')).find((r) => r.kind === 'intent' && r.intent === 'action');
    expect(intent).toMatchObject({ replayPolicy: 'never' });
    const again = harness({ store: inner, script: ['{"tool":"note","args":{"text":"once"}}', '{"final":"x"}'] });
    const result = await resume(again.agent, { ...again.request, executor: customExecutor('safe', ran) });
    expect(result).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'settle', target: 'action' } });
    expect(ran).toEqual(['note:once']);
  });

  it("an executor's explicit never makes a safe tool never", async () => {
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"x"}'] });
    await run(h.agent, { ...h.request, executor: customExecutor('never', []) });
    const intent = (await h.store.readLog('run-1')).find((r) => r.kind === 'intent' && r.intent === 'action');
    expect(intent).toMatchObject({ replayPolicy: 'never' });
  });

  it("the executor's replay policy is part of the run's identity", async () => {
    const h = harness({ script: ['{"final":"x"}'] });
    await run(h.agent, { ...h.request, executor: customExecutor('safe', []) });
    await expect(resume(h.agent, { ...h.request, executor: customExecutor('never', []) })).rejects.toThrow(
      /executorReplayPolicy/,
    );
  });
});

describe('a custom executor next to tools sees only tool calls that validate', () => {
  it.each([
    ['an unknown tool', '{"tool":"nope","args":{}}', /unknown tool "nope"/],
    ['arguments that fail the schema', '{"tool":"add","args":{"a":"one","b":2}}', /do not match its schema/],
  ])('%s is not_executed with a synthetic observation and never reaches the executor', async (_name, line, message) => {
    const seen: unknown[] = [];
    const h = harness({ script: [line, '{"final":"x"}'] });
    const executor: ActionExecutor = {
      replayPolicy: 'never',
      execute: async (a) => (
        seen.push(a),
        {
          status: 'executed',
          observation: 'ran',
          observationIsSynthetic: false,
          envReportedCompletion: false,
          observationTruncatedChars: 0,
        }
      ),
    };
    const result = await run(h.agent, { ...h.request, executor });
    expect(seen).toEqual([]);
    expect(result.trajectory[0]).toMatchObject({ actionStatus: 'not_executed', observationIsSynthetic: true });
    expect(result.trajectory[0]?.observation).toMatch(message);
    expect(result.validActions).toBe(0);
    const intent = (await h.store.readLog('run-1')).find((r) => r.kind === 'intent' && r.intent === 'action');
    expect(intent).toMatchObject({ replayPolicy: 'safe' });
  });

  it('with no tools, a custom executor still receives every action (it is the environment)', async () => {
    const seen: unknown[] = [];
    const h = harness({ script: ['{"tool":"anything","args":{"x":1}}', '{"final":"x"}'], tools: [] });
    const executor: ActionExecutor = {
      execute: async (a) => (
        seen.push(a),
        {
          status: 'executed',
          observation: 'ran',
          observationIsSynthetic: false,
          envReportedCompletion: false,
          observationTruncatedChars: 0,
        }
      ),
    };
    const result = await run(h.agent, { ...h.request, executor });
    expect(seen).toHaveLength(1);
    expect(result.trajectory[0]?.actionStatus).toBe('executed');
  });
});
