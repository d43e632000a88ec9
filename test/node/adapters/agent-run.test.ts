/**
 * Full agent runs (`run()`) through each adapter against its loopback fake: native tool calls
 * round-trip over several steps, and the bodies the server received on later calls carry the
 * assistant's tool calls and their results in the provider's own shapes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicModel, anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import { openAIModel, openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import { defineAgent, InMemoryStore, resume, run } from '../../../src/core/index.ts';
import type { DecisionInterpreter, ModelCaller, RunStore } from '../../../src/core/index.ts';
import { collectingSink, faultyStore } from '../../../src/testing/index.ts';
import {
  ANTHROPIC_SCRIPT,
  ANTHROPIC_USAGE_SCRIPT,
  EMPTY,
  MULTI,
  OPENAI_SCRIPT,
  OPENAI_USAGE_SCRIPT,
  request,
  SYNTHETIC,
} from './agent-fixtures.ts';
import type { AnthropicFake } from './anthropic-server.ts';
import type { OpenAIFake } from './openai-server.ts';
import { startAnthropicFake, startOpenAIFake } from './serve.ts';

async function runAgent(
  model: ModelCaller,
  interpreter: DecisionInterpreter,
  store: RunStore = new InMemoryStore(),
  runId = 'r1',
) {
  const events = collectingSink();
  const agent = defineAgent({ model, interpreter, store, events, syntheticObservations: SYNTHETIC });
  const result = await run(agent, request(runId));
  return { result, events: events.events, agent };
}

describe.each([false, true])('a run through openAIModel (stream: %s)', (stream) => {
  let fake: OpenAIFake;
  beforeAll(async () => {
    fake = await startOpenAIFake([...OPENAI_SCRIPT]);
  });
  afterAll(() => fake.close());

  it('round-trips native tool calls over four steps and ends with the final answer', async () => {
    const model = openAIModel({ model: 'gpt-test', baseURL: fake.baseURL, stream, body: { store: true } });
    const { result, events } = await runAgent(model, openAIToolInterpreter());
    expect(result).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'The answer is 7.',
      steps: 4,
      validActions: 2,
    });
    expect(result.trajectory.map((s) => [s.decision, s.modelCallId, s.observation ?? s.explanation])).toEqual([
      ['action', 'chatcmpl-0', '3'],
      ['invalid', 'chatcmpl-1', MULTI],
      ['action', 'chatcmpl-2', '7'],
      ['final', 'chatcmpl-3', null],
    ]);
    expect(result.trajectory[0]!.reasoning).toBe('first add');
    const bodies = fake.requests.map((r) => r.body as { messages: unknown[]; metadata?: unknown });
    expect(bodies).toHaveLength(4);
    expect(bodies[0]!.metadata).toEqual({ user_id: 'u-1' });
    // 2nd call: the first tool call and its observation, as assistant tool_calls + a tool message.
    expect(bodies[1]!.messages.slice(3)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }],
      },
      { role: 'tool', tool_call_id: 'call_0', content: 'Observation: 3' },
    ]);
    // 3rd call: both calls of the invalid turn answered with the explanation, in order.
    expect(bodies[2]!.messages.slice(5)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1a', type: 'function', function: { name: 'add', arguments: '{"a":3,"b":4}' } },
          { id: 'call_1b', type: 'function', function: { name: 'add', arguments: '{"a":0,"b":0}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1a', content: MULTI },
      { role: 'tool', tool_call_id: 'call_1b', content: MULTI },
    ]);
    expect(bodies[3]!.messages.slice(8)).toEqual([
      {
        role: 'assistant',
        content: 'Adding 3 and 4.',
        tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'add', arguments: '{"a":3,"b":4}' } }],
      },
      { role: 'tool', tool_call_id: 'call_2', content: 'Observation: 7' },
    ]);
    expect(bodies[0]!.messages.slice(0, 3)).toEqual([
      { role: 'system', content: 'You are a calculator. Use the add tool.' },
      { role: 'system', content: expect.stringContaining('Answer briefly.') },
      { role: 'user', content: 'What is (1+2)+4?' },
    ]);
    const deltas = events.flatMap((e) => (e.type === 'model_delta' && e.kind === undefined ? [e.delta] : []));
    if (stream) expect(deltas.join('')).toBe('Adding 3 and 4.The answer is 7.');
    else expect(deltas).toEqual([]);
    const thoughts = events.flatMap((e) => (e.type === 'model_delta' && e.kind === 'reasoning' ? [e.delta] : []));
    expect(thoughts.join('')).toBe(stream ? 'first add' : '');
  });
});

describe.each([false, true])('a run through anthropicModel (stream: %s)', (stream) => {
  let fake: AnthropicFake;
  beforeAll(async () => {
    fake = await startAnthropicFake([...ANTHROPIC_SCRIPT]);
  });
  afterAll(() => fake.close());

  it('round-trips tool_use, tool_result and signed thinking over four steps', async () => {
    const model = anthropicModel({ model: 'claude-test', baseURL: fake.baseURL, maxTokens: 512, stream });
    const { result } = await runAgent(model, anthropicToolInterpreter());
    expect(result).toMatchObject({
      stopReason: 'final_answer',
      finalAnswer: 'The answer is 7.',
      steps: 4,
      validActions: 2,
    });
    expect(result.trajectory.map((s) => [s.decision, s.modelCallId])).toEqual([
      ['action', 'msg_0'],
      ['invalid', 'msg_1'],
      ['action', 'msg_2'],
      ['final', 'msg_3'],
    ]);
    const bodies = fake.requests.map((r) => r.body as { system: unknown; messages: unknown[]; metadata?: unknown });
    expect(bodies[0]!.metadata).toEqual({ user_id: 'u-1' });
    expect(bodies[0]!.system).toEqual([
      { type: 'text', text: 'You are a calculator. Use the add tool.' },
      { type: 'text', text: expect.stringContaining('Answer briefly.') },
    ]);
    // 2nd call: thinking sent back verbatim with its signature, tool_use, then the tool_result.
    expect(bodies[1]!.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is (1+2)+4?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'First add 1 and 2.', signature: 'sig-0' },
          { type: 'tool_use', id: 'toolu_0', name: 'add', input: { a: 1, b: 2 } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'Observation: 3' }] },
    ]);
    // 3rd call: the empty assistant turn is dropped (the API refuses empty content) and the
    // explanation joins the user turn.
    expect(bodies[2]!.messages.slice(2)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_0', content: 'Observation: 3' },
          { type: 'text', text: EMPTY },
        ],
      },
    ]);
    expect(bodies[3]!.messages.slice(3)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Now 3+4.' },
          { type: 'tool_use', id: 'toolu_2', name: 'add', input: { a: 3, b: 4 } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'Observation: 7' }] },
    ]);
  });
});

describe('a provider error during a run', () => {
  it('ends the run with model_error and records the error with status, type and request id', async () => {
    const fake = await startOpenAIFake([
      OPENAI_SCRIPT[0]!,
      { kind: 'error', status: 429, type: 'rate_limit_exceeded', message: 'Rate limit reached' },
    ]);
    try {
      const { result } = await runAgent(
        openAIModel({ model: 'gpt-test', baseURL: fake.baseURL, body: { store: true } }),
        openAIToolInterpreter(),
      );
      expect(result).toMatchObject({ stopReason: 'model_error', steps: 2, validActions: 1 });
      expect(result.trajectory[1]).toMatchObject({ decision: 'model_error', modelCallId: null });
      expect(result.trajectory[1]!.observation).toBe(
        'ModelCallError: openai: Rate limit reached (status 429, rate_limit_exceeded, request req_2)',
      );
      expect(fake.requests).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });
});

type Fake = { readonly baseURL: string; readonly requests: { readonly body: unknown }[]; close(): Promise<void> };
type Subject = readonly [string, () => Promise<Fake>, (baseURL: string) => ModelCaller, () => DecisionInterpreter];

const SUBJECTS: Subject[] = [
  [
    'openAIModel',
    () => startOpenAIFake([...OPENAI_USAGE_SCRIPT], { deterministic: true }),
    (baseURL) => openAIModel({ model: 'gpt-test', baseURL, body: { store: true } }),
    openAIToolInterpreter,
  ],
  [
    'anthropicModel (stream)',
    () => startAnthropicFake([...ANTHROPIC_USAGE_SCRIPT], { deterministic: true }),
    (baseURL) => anthropicModel({ model: 'claude-test', baseURL, maxTokens: 512, stream: true }),
    anthropicToolInterpreter,
  ],
];
// The run makes 14 writes: run_started, 3 per action step (the model result lands with the action
// intent, decision 0040), 3 per invalid / final step, run_ended.
const CRASH_POINTS = Array.from({ length: 13 }, (_, i) => i + 1).flatMap((k) => [
  [k, false] as const,
  [k, true] as const,
]);

describe.each(SUBJECTS)('a run through %s crashed at every write point', (_name, start, makeModel, makeInterpreter) => {
  let fake: Fake;
  let reference: Awaited<ReturnType<typeof runAgent>>;
  let referenceBodies: string[];
  let referenceUsage: string[];
  beforeAll(async () => {
    fake = await start();
    const store = new InMemoryStore();
    const counting = faultyStore(store, { crashAfterWrites: Number.MAX_SAFE_INTEGER });
    reference = await runAgent(makeModel(fake.baseURL), makeInterpreter(), counting);
    expect(counting.writes).toHaveLength(14);
    referenceBodies = fake.requests.map((r) => JSON.stringify(r.body));
    referenceUsage = await storedUsage(store);
    expect(referenceUsage).toHaveLength(4);
    expect(reference.result.usage.inputTokens).toBeGreaterThan(0);
  });
  afterAll(() => fake.close());

  it.each(CRASH_POINTS)(
    'resumes after write %i (landing anyway: %s) to the same trajectory and byte-identical requests',
    async (crashAfterWrites, landsBeforeThrow) => {
      const before = fake.requests.length;
      const inner = new InMemoryStore();
      await expect(
        runAgent(
          makeModel(fake.baseURL),
          makeInterpreter(),
          faultyStore(inner, { crashAfterWrites, landsBeforeThrow }),
        ),
      ).rejects.toThrow();
      const agent = defineAgent({
        model: makeModel(fake.baseURL),
        interpreter: makeInterpreter(),
        store: inner,
        events: collectingSink(),
        syntheticObservations: SYNTHETIC,
      });
      const resumed = await resume(agent, request('r1'));
      const strip = (steps: typeof resumed.trajectory) => steps.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest);
      expect(strip(resumed.trajectory)).toEqual(strip(reference.result.trajectory));
      // A call re-issued after the crash repeats its request byte for byte; nothing else differs.
      const bodies = fake.requests.slice(before).map((r) => JSON.stringify(r.body));
      expect(bodies.filter((b, i) => b !== bodies[i - 1])).toEqual(referenceBodies);
      // Each stored result keeps its call's usage, and the totals come out the same.
      expect(await storedUsage(inner)).toEqual(referenceUsage);
      expect(resumed.usage).toEqual(reference.result.usage);
    },
  );
});

/** The usage, finish reason and provider metadata of every stored model result, in log order. */
async function storedUsage(store: RunStore): Promise<string[]> {
  const log = await store.readLog('r1');
  return log.flatMap((r) =>
    r.kind === 'result' ? [JSON.stringify([r.reply.usage, r.reply.finishReason, r.reply.providerMetadata])] : [],
  );
}
