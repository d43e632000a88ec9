/** Reply metadata in core: finish reason, usage and provider metadata; usage totals; maxTotalTokens; opaque blocks. */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, readRunLog, resume, run, validateRunRequest } from '../../../src/core/index.ts';
import type { LogRecord, ModelReply, RunEvent } from '../../../src/core/index.ts';
import { crashAtEveryWrite, scriptedModel } from '../../../src/testing/index.ts';
import { harness, safeTools } from './fixtures.ts';

const reply = (
  text: string,
  inputTokens: number,
  outputTokens: number,
  extra: Partial<ModelReply> = {},
): ModelReply => ({
  callId: `c-${inputTokens}`,
  text,
  reasoning: null,
  finishReason: 'stop',
  usage: { inputTokens, outputTokens, cachedInputTokens: Math.floor(inputTokens / 2) },
  providerMetadata: { fake: { tier: 'test' } },
  ...extra,
});

const SCRIPT: ModelReply[] = [
  reply('{"tool":"add","args":{"a":1,"b":2}}', 100, 10),
  reply('{"tool":"add","args":{"a":3,"b":4}}', 200, 20),
  reply('{"final":"7"}', 300, 30),
];

function metered(opts: { maxTotalTokens?: number; script?: ModelReply[] } = {}) {
  const h = harness({ script: opts.script ?? SCRIPT, tools: safeTools() });
  const request =
    opts.maxTotalTokens === undefined
      ? h.request
      : { ...h.request, budget: { ...h.request.budget, maxTotalTokens: opts.maxTotalTokens } };
  return { ...h, request };
}

describe('reply metadata is stored and summed', () => {
  it("each step keeps its call's usage and finish reason; the result record keeps all three; RunResult and run_ended carry the totals", async () => {
    const h = metered();
    const result = await run(h.agent, h.request);
    expect(result.trajectory.map((s) => [s.usage?.inputTokens, s.finishReason])).toEqual([
      [100, 'stop'],
      [200, 'stop'],
      [300, 'stop'],
    ]);
    expect(result.usage).toEqual({ inputTokens: 600, outputTokens: 60, cachedInputTokens: 300 });
    const log = await h.store.readLog('run-1');
    const results = log.filter((r): r is Extract<LogRecord, { kind: 'result' }> => r.kind === 'result');
    expect(results[0]?.reply).toMatchObject({
      finishReason: 'stop',
      usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 50 },
      providerMetadata: { fake: { tier: 'test' } },
    });
    expect(log.at(-1)).toMatchObject({ kind: 'run_ended', usage: result.usage });
    expect(readRunLog(log).usage).toEqual(result.usage);
  });

  it('a resumed run reports the same totals as the uninterrupted one (crash at every write point)', async () => {
    const report = await crashAtEveryWrite({
      setup: (store) => {
        const h = harness({ store, script: SCRIPT, tools: safeTools() });
        return { agent: h.agent, request: h.request };
      },
    });
    expect(report.failures).toEqual([]);
    for (const c of report.cases) expect(c.result.usage).toEqual(report.reference.usage);
  });

  it('a reply with metadata of the wrong shape is a model failure naming the field', async () => {
    for (const [bad, message] of [
      [{ finishReason: 'tired' }, /finishReason must be one of/],
      [{ usage: { inputTokens: -1, outputTokens: 0 } }, /usage\.inputTokens must be a non-negative integer/],
      [{ usage: { inputTokens: 1 } }, /usage\.outputTokens must be a non-negative integer/],
      [{ providerMetadata: 'x' }, /providerMetadata must be an object/],
    ] as const) {
      const h = metered({ script: [reply('{"final":"x"}', 1, 1, bad as Partial<ModelReply>)] });
      const result = await run(h.agent, h.request);
      expect(result.stopReason).toBe('model_error');
      expect(result.trajectory[0]?.observation).toMatch(message);
    }
  });
});

describe('budget.maxTotalTokens', () => {
  it('stops the run with max_tokens after the step that reaches it (input + output)', async () => {
    const h = metered({ maxTotalTokens: 330 });
    const result = await run(h.agent, h.request);
    expect(result).toMatchObject({ stopReason: 'max_tokens', steps: 2, usage: { inputTokens: 300, outputTokens: 30 } });
  });

  it('is checked after max_steps in the stop order', async () => {
    const h = metered({ maxTotalTokens: 1 });
    const result = await run(h.agent, { ...h.request, budget: { ...h.request.budget, maxSteps: 1 } });
    expect(result.stopReason).toBe('max_steps');
  });

  it('is part of the identity when set, and only then (a run without it keeps its old identity)', async () => {
    const h = metered({ maxTotalTokens: 10_000 });
    await run(h.agent, h.request);
    await expect(
      resume(h.agent, { ...h.request, budget: { ...h.request.budget, maxTotalTokens: 20_000 } }),
    ).rejects.toThrow(/budget\.maxTotalTokens/);
    const started = (await h.store.readLog('run-1'))[0];
    const plain = metered();
    await run(plain.agent, plain.request);
    const plainStarted = (await plain.store.readLog('run-1'))[0];
    expect(started?.kind === 'run_started' && started.snapshot['budget']).toMatchObject({ maxTotalTokens: 10_000 });
    expect(plainStarted?.kind === 'run_started' && Object.keys(plainStarted.snapshot['budget'] as object)).toEqual([
      'maxContextChars',
      'maxSteps',
      'maxValidActions',
    ]);
  });

  it.each([0, -5, 1.5, '100'])('refuses maxTotalTokens %j', (n) => {
    const h = metered();
    expect(() =>
      validateRunRequest({ ...h.request, budget: { ...h.request.budget, maxTotalTokens: n as number } }),
    ).toThrow(/budget\.maxTotalTokens must be a positive integer/);
  });

  it('counts a model that reports no usage as 0 and warns once (usage_missing) — only when a token budget is set', async () => {
    const silent = ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'];
    const budgeted = harness({
      script: silent,
      tools: safeTools(),
      request: { budget: { maxSteps: 20, maxValidActions: 10, maxContextChars: 100_000, maxTotalTokens: 5 } },
    });
    const result = await run(budgeted.agent, budgeted.request);
    expect(result).toMatchObject({ stopReason: 'final_answer', usage: { inputTokens: 0, outputTokens: 0 } });
    const warnings = budgeted.sink.events.filter(
      (e): e is Extract<RunEvent, { type: 'warning' }> => e.type === 'warning',
    );
    expect(warnings.map((w) => w.code)).toEqual(['usage_missing']);
    const free = harness({ script: silent, tools: safeTools() });
    await run(free.agent, free.request);
    expect(free.sink.events.filter((e) => e.type === 'warning')).toEqual([]);
  });
});

describe('truncation and opaque blocks', () => {
  it('a reply cut off at the token limit is never a final answer (jsonActionInterpreter)', async () => {
    const h = metered({
      script: [reply('{"final":"the answ', 10, 4096, { finishReason: 'length' }), reply('{"final":"short"}', 10, 3)],
    });
    const result = await run(h.agent, h.request);
    expect(result.trajectory[0]).toMatchObject({ decision: 'invalid', finishReason: 'length' });
    expect(result.trajectory[0]?.explanation).toMatch(/cut off at the token limit/);
    expect(result.finalAnswer).toBe('short');
  });

  it('an opaque block round-trips through the log into the next prompt, and counts its data toward the context size', async () => {
    const opaque = {
      type: 'opaque' as const,
      provider: 'anthropic',
      data: { type: 'redacted_thinking', data: 'EuYBCkQYAiJA' },
    };
    const content = [opaque, { type: 'tool_call' as const, id: 't0', name: 'add', arguments: { a: 1, b: 2 } }];
    const first: ModelReply = {
      callId: 'r0',
      text: '',
      reasoning: null,
      toolCalls: [{ id: 't0', name: 'add', arguments: { a: 1, b: 2 } }],
      content,
    };
    const model = scriptedModel([first, { callId: 'r1', text: 'done', reasoning: null }]);
    const h = harness({ tools: safeTools(), store: new InMemoryStore() });
    const { nativeInterpreter } = await import('./fixtures.ts');
    const agent = { ...h.agent, model, interpreter: nativeInterpreter() };
    const { defineAgent } = await import('../../../src/core/index.ts');
    const result = await run(defineAgent(agent), h.request);
    expect(result.stopReason).toBe('final_answer');
    expect(result.trajectory[0]?.historyContent).toEqual(content);
    expect(
      model.calls[1]?.messages.some((m) =>
        m.content.some((b) => b.type === 'opaque' && JSON.stringify(b.data) === JSON.stringify(opaque.data)),
      ),
    ).toBe(true);
    const small = harness({
      tools: safeTools(),
      request: { budget: { maxSteps: 20, maxValidActions: 10, maxContextChars: 1 } },
    });
    const withOpaque = defineAgent({ ...small.agent, model: scriptedModel([first]), interpreter: nativeInterpreter() });
    expect(
      (await run(withOpaque, { ...small.request, context: { run: [], goal: [{ role: 'user', content: [opaque] }] } }))
        .stopReason,
    ).toBe('context_limit');
  });
});
