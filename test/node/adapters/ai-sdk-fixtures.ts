/** Shared pieces of the AI SDK adapter's runs (Web APIs only: also used inside workerd). */
import { defineAgent, InMemoryStore, run } from '../../../src/core/index.ts';
import type { ModelCaller, RunRequest, RunStore } from '../../../src/core/index.ts';
import { aiSdkToolInterpreter } from '../../../src/adapters/ai-sdk.ts';
import { collectingSink } from '../../../src/testing/index.ts';
import { request, SYNTHETIC } from './agent-fixtures.ts';
import type { OpenAITurn } from './openai-server.ts';

/** A run through `model` with the AI SDK interpreter; `over` adjusts the request (e.g. the budget). */
export async function runThrough(
  model: ModelCaller,
  over: Partial<RunRequest> = {},
  store: RunStore = new InMemoryStore(),
) {
  const events = collectingSink();
  const agent = defineAgent({
    model,
    interpreter: aiSdkToolInterpreter(),
    store,
    events,
    syntheticObservations: SYNTHETIC,
  });
  const result = await run(agent, { ...request('ai-sdk-run'), ...over });
  const deltas = events.events.flatMap((e) => (e.type === 'model_delta' && e.kind === undefined ? [e.delta] : []));
  const thoughts = events.events.flatMap((e) => (e.type === 'model_delta' && e.kind === 'reasoning' ? [e.delta] : []));
  return { result, events: events.events, deltas, thoughts };
}

/** A reply cut off at the token limit, then the whole answer. */
export const CUT_SCRIPT: OpenAITurn[] = [
  { kind: 'reply', id: 'chatcmpl-cut', text: 'The answer is', finishReason: 'length' },
  { kind: 'reply', id: 'chatcmpl-ok', text: 'The answer is 7.' },
];

/** A `fetch` that serves a hono app in-process (workerd cannot reach a loopback socket). */
export const via =
  (app: { fetch(req: Request): Response | Promise<Response> }) =>
  (url: RequestInfo | URL, init?: RequestInit): Promise<Response> =>
    Promise.resolve(app.fetch(new Request(url, init)));
