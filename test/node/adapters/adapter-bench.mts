/**
 * Not a test (no timing assertions belong in tests): loopback latency of one model call through
 * openAIModel (JSON, SSE) vs the official openai SDK on the same fake, and the cost of translating
 * a 1000-message history. Run: `npx tsx test/node/adapters/adapter-bench.mts`.
 */
import OpenAI from 'openai';
import { openAIModel } from '../../../src/adapters/openai.ts';
import { openAIRequestBody } from '../../../src/adapters/openai-wire.ts';
import { toOpenAIMessages } from '../../../src/adapters/openai-wire.ts';
import { toAnthropicMessages } from '../../../src/adapters/anthropic-wire.ts';
import { startOpenAIFake } from './serve.ts';
import { modelCall, ROUND_TRIP } from './helpers.ts';
import type { Message } from '../../../src/core/index.ts';
const N = 300;
const turn = {
  kind: 'reply',
  id: 'c',
  text: 'ok',
  toolCalls: [{ id: 'call', name: 'add', arguments: '{"a":1,"b":2}' }],
} as const;
const fake = await startOpenAIFake([], { deterministic: true });
for (let i = 0; i < 50; i++) fake.turns.push(turn as never);
const call = modelCall({ messages: ROUND_TRIP.slice(0, 3) });
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function time(label: string, f: () => Promise<unknown>) {
  for (let i = 0; i < 30; i++) await f();
  const xs: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await f();
    xs.push(performance.now() - t);
  }
  console.log(
    label,
    'median ms',
    median(xs).toFixed(3),
    'p95',
    xs.sort((a, b) => a - b)[Math.floor(N * 0.95)]!.toFixed(3),
  );
}
const ours = openAIModel({ model: 'm', baseURL: fake.baseURL });
const oursS = openAIModel({ model: 'm', baseURL: fake.baseURL, stream: true });
const sdk = new OpenAI({ apiKey: 'x', baseURL: fake.baseURL, maxRetries: 0 });
await time('openAIModel (loopback, JSON)', () => ours.call(call));
await time('openAIModel (loopback, SSE)', () => oursS.call(call));
await time('openai SDK   (loopback, JSON)', () =>
  sdk.chat.completions.create({ ...openAIRequestBody(call, { model: 'm' }), stream: false }),
);
const big: Message[] = [];
for (let i = 0; i < 500; i++) big.push(...ROUND_TRIP.slice(3));
let t = performance.now();
for (let i = 0; i < 100; i++) toOpenAIMessages(big);
console.log('toOpenAIMessages 1000 msgs, ms/op', ((performance.now() - t) / 100).toFixed(3));
t = performance.now();
for (let i = 0; i < 100; i++) toAnthropicMessages(big);
console.log('toAnthropicMessages 1000 msgs, ms/op', ((performance.now() - t) / 100).toFixed(3));
await fake.close();
