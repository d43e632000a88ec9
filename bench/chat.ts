/**
 * Section `chat` of `npm run bench`: what `polyloop/chat` adds in front of a model.
 * - POST → first text chunk through `chatHandler` on a real Node HTTP server (loopback fetch,
 *   SSE read as bytes), beside the floor: the same model's own time to its first delta, called
 *   directly. The difference is the chat's overhead (target ≤ 5 ms).
 * - The bytes a replay of a finished 50-step turn sends (a repeated POST: the turn from its log)
 *   beside the bytes of its live stream (target ≤ 1×: a replay sends each model call's text as
 *   one delta, never re-typed).
 * @module
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { nativeToolInterpreter } from '../src/adapters/tool-interpreter.ts';
import { chatHandler } from '../src/chat/index.ts';
import type { ChatTurn } from '../src/chat/index.ts';
import { defineAgent, InMemoryStore, silentSink, ToolRegistry } from '../src/core/index.ts';
import { STANDARD_SYNTHETIC_OBSERVATIONS as SYNTHETIC } from '../src/core/index.ts';
import type { ModelCall, ModelCaller, ModelReply, RunRequest, RunStore } from '../src/core/index.ts';
import { FileStore } from '../src/platform-node/index.ts';
import type { Plan, Row } from './kernel.ts';
import { median } from './stats.ts';

/** How long the model takes to its first delta. */
const FIRST_DELTA_MS = 10;
const noop = (): void => {};
const STEPS = 50;

/**
 * A streaming model: after `firstDeltaMs`, its text in deltas of 8 characters; `steps - 1` tool
 * calls, then the answer. `ownFirstDelta` is told, per call, how long the model itself took to
 * its first delta (the floor, paired with the sample it belongs to).
 */
function streamingModel(steps: number, firstDeltaMs: number, ownFirstDelta: (ms: number) => void = noop): ModelCaller {
  return {
    params: Object.freeze({ model: 'bench-stream' }),
    async call(call: ModelCall): Promise<ModelReply> {
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, firstDeltaMs));
      const text = `Step ${call.callSeq}: thinking about the numbers before the next move.`;
      ownFirstDelta(performance.now() - t0);
      for (let i = 0; i < text.length; i += 8) call.onDelta?.(text.slice(i, i + 8));
      const last = call.callSeq >= steps - 1;
      const toolCalls = last ? [] : [{ id: `c${call.callSeq}`, name: 'add', arguments: { a: call.callSeq, b: 1 } }];
      return { callId: `r${call.callSeq}`, text, reasoning: null, toolCalls };
    },
  };
}

function handlerFor(store: RunStore, model: ModelCaller): (req: Request) => Promise<Response> {
  const tools = ToolRegistry.of([
    {
      name: 'add',
      description: 'Adds',
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      replayPolicy: 'safe',
      handler: async (args) => String((args as { a: number }).a + (args as { b: number }).b),
    },
  ]);
  const interpreter = nativeToolInterpreter('bench');
  const agent = defineAgent({ model, interpreter, store, events: silentSink(), syntheticObservations: SYNTHETIC });
  const request = ({ runId, goal, context }: ChatTurn): RunRequest => ({
    runId,
    budget: { maxSteps: STEPS + 5, maxValidActions: STEPS + 5, maxContextChars: 10_000_000 },
    executor: tools.executor(),
    tools,
    context: { run: context, goal },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1000,
  });
  return chatHandler({ agent, store, request });
}

/** A loopback HTTP server for `handle`; its base URL and a close function. */
async function serve(handle: (req: Request) => Promise<Response>): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(getRequestListener(handle));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/chat`, close: () => new Promise((r) => server.close(() => r())) };
}

const USER = { id: 'u', role: 'user', parts: [{ type: 'text', text: 'go' }] };
const body = (id: string): string => JSON.stringify({ id, trigger: 'submit-message', messages: [USER] });

/** POST a turn; ms until the first `text-delta` line arrived, and every byte of the response. */
async function postTurn(url: string, id: string): Promise<{ firstTextMs: number; bytes: number }> {
  const t0 = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(id) });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let seen = '';
  let firstTextMs = Number.NaN;
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (Number.isNaN(firstTextMs)) {
      seen += decoder.decode(value, { stream: true });
      if (seen.includes('"type":"text-delta"')) firstTextMs = performance.now() - t0;
    }
  }
  return { firstTextMs, bytes };
}

async function firstTextRow(plan: Plan, store: RunStore, label: string): Promise<Row> {
  let own = Number.NaN;
  const server = await serve(
    handlerFor(
      store,
      streamingModel(1, FIRST_DELTA_MS, (ms) => (own = ms)),
    ),
  );
  const values: number[] = [];
  const floors: number[] = [];
  const overheads: number[] = [];
  try {
    const n = plan.warmup + plan.runs * 4;
    for (let i = 0; i < n; i++) {
      const { firstTextMs } = await postTurn(server.url, `b${label}${i}`);
      if (i < plan.warmup) continue;
      values.push(firstTextMs);
      floors.push(own);
      overheads.push(firstTextMs - own);
    }
  } finally {
    await server.close();
  }
  const overhead = median(overheads);
  const paired = `overhead (median of the paired differences) ${overhead.toFixed(1)} ms, target ≤ 5`;
  const note = `floor = the model's own first delta in the same request; ${paired}`;
  const name = `POST → first text chunk (${label})`;
  const value = median(values);
  const floor = median(floors);
  return { section: 'chat', name, unit: 'ms', value, floor, samples: values, floorSamples: floors, note };
}

async function replayBytesRow(plan: Plan): Promise<Row> {
  const live: number[] = [];
  const replay: number[] = [];
  const server = await serve(handlerFor(new InMemoryStore(), streamingModel(STEPS, 0)));
  try {
    for (let i = 0; i < plan.runs; i++) {
      live.push((await postTurn(server.url, `r${i}`)).bytes);
      replay.push((await postTurn(server.url, `r${i}`)).bytes);
    }
  } finally {
    await server.close();
  }
  const value = median(replay);
  const floor = median(live);
  const name = `replay of a ${STEPS}-step turn`;
  return {
    section: 'chat',
    name,
    unit: 'bytes',
    value,
    floor,
    samples: replay,
    floorSamples: live,
    note: 'floor = the live stream of the same turn (target ≤ 1×)',
  };
}

/** The rows of section `chat`. */
export async function chatBench(plan: Plan): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'polyloop-chat-bench-'));
  try {
    return [
      await firstTextRow(plan, new InMemoryStore(), 'InMemoryStore'),
      await firstTextRow(plan, new FileStore({ dir }), 'FileStore'),
      await replayBytesRow(plan),
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
