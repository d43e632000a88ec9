// A PolyLoop Worker to copy (see README.md): one Durable Object per run, an OpenAI model with tools,
// and a chat for the AI SDK's useChat, one Durable Object per turn.
import { defineAgent, InMemoryStore, silentSink, ToolRegistry } from 'polyloop';
import type { RunRequest } from 'polyloop';
import { openAIModel, openAIToolInterpreter } from 'polyloop/adapters/openai';
import type { ChatTurn } from 'polyloop/chat';
import { createApp, createChatTurnObject, createRunObject, RunIndex } from 'polyloop/workers';
import type { ChatTurnObjectBase, RunIndexNamespace, RunObjectBase } from 'polyloop/workers';

type Env = {
  RUNS: DurableObjectNamespace<RunObjectBase<Env>>; // wrangler.toml: one object per run
  RUN_INDEX: RunIndexNamespace; // wrangler.toml: the list behind GET /runs
  CHAT: DurableObjectNamespace<ChatTurnObjectBase<Env>>; // wrangler.toml: one object per chat turn
  POLYLOOP_TOKEN: string; // secret: every request needs `Authorization: Bearer <it>`
  OPENAI_API_KEY: string; // secret
  OPENAI_MODEL: string; // var
  OPENAI_BASE_URL?: string; // var: another OpenAI-compatible server (default: api.openai.com)
  PAGE_ORIGINS?: string; // var: origins of the pages that may call this Worker (your useChat app), comma-separated
  NOTIFY_URL?: string; // var: where the chat's notify tool POSTs a message
};

const add = {
  name: 'add',
  description: 'Add two numbers.',
  replayPolicy: 'safe' as const,
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
};
const tools = ToolRegistry.of([{ ...add, handler: async ({ a, b }) => String(Number(a) + Number(b)) }]);
const text = (role: 'system' | 'user', t: string) => ({ role, content: [{ type: 'text' as const, text: t }] });
const syntheticObservations = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' };
// stream: the chat shows the reply as it is written (text deltas).
const model = (env: Env, stream = false) =>
  openAIModel({
    model: env.OPENAI_MODEL,
    apiKey: env.OPENAI_API_KEY,
    stream,
    ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
  });
const settings = { injections: {}, modelBinding: {}, modelReplayPolicy: 'safe' as const, cancelGraceMs: 5_000 };

export { RunIndex };
export class RunObject extends createRunObject<Env>({
  index: (env) => env.RUN_INDEX,
  // Called when a run starts (a throw is a 400) and again on every resume, with the same input. The agent's part
  // (defaults: tools, prompt, budget) is built anew each time; the run's own part (request: its goal) goes into its
  // log at the start and is read back from there. A deploy that changes the agent halts the runs that live on until
  // you upgrade them: POST /runs/:id/upgrade with { "reason": "…" } (docs/http.md).
  setup: ({ env, input }) => {
    const goal = (input as { goal?: unknown } | null)?.goal;
    if (typeof goal !== 'string' || goal.trim() === '') throw new Error('input must be { "goal": "<a task>" }');
    return {
      model: model(env),
      interpreter: openAIToolInterpreter(),
      syntheticObservations,
      defaults: {
        ...settings,
        tools,
        executor: tools.executor(),
        budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 100_000 },
        context: { run: [text('system', 'Use the add tool for arithmetic, then answer in one sentence.')] },
        observationTemplate: '{observation}',
        toolRenderStyle: 'none',
      },
      request: { goal },
    };
  },
}) {}

/** The chat's tools: add, and notify — a message to the team, sent only once a person approved it, never sent twice. */
function chatTools(env: Env): ToolRegistry {
  const notify = {
    name: 'notify',
    description: 'Send a short message to the team.',
    parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    needsApproval: true, // the page shows Approve / Deny
    replayPolicy: 'never' as const, // interrupted mid-send: a person settles it, it is not sent again
    handler: async ({ message }: Record<string, unknown>) => {
      if (!env.NOTIFY_URL) throw new Error('NOTIFY_URL is not set');
      const res = await fetch(env.NOTIFY_URL, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: String(message),
      });
      if (!res.ok) throw new Error(`the team's webhook answered ${res.status}`);
      return 'The team got the message.';
    },
  };
  return ToolRegistry.of([{ ...add, handler: async ({ a, b }) => String(Number(a) + Number(b)) }, notify]);
}

/** A chat turn's request: the system prompt, the conversation so far (from the previous turn's log), the new message. */
const chatRequest =
  (env: Env) =>
  ({ runId, goal, context }: ChatTurn): RunRequest => {
    const chat = chatTools(env);
    return {
      ...settings,
      runId,
      budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 200_000 },
      tools: chat,
      executor: chat.executor(),
      context: {
        run: [
          text('system', 'You are a helpful assistant. Use add for arithmetic and notify to message the team.'),
          ...context,
        ],
        goal,
      },
      observationTemplate: '{observation}',
      toolRenderStyle: 'none',
    };
  };

// POST /chat, GET /chat/:chatId/stream, GET /chat/:chatId/messages: each turn of each chat is one of these objects.
export class ChatTurnObject extends createChatTurnObject<Env>({
  turns: (env) => env.CHAT,
  setup: ({ env }) => ({
    // The chat runs each turn on its turn object's own log: this agent's store is never written.
    agent: defineAgent({
      model: model(env, true),
      interpreter: openAIToolInterpreter(),
      store: new InMemoryStore(),
      events: silentSink(),
      syntheticObservations,
    }),
    request: chatRequest(env),
  }),
}) {}

let app: ReturnType<typeof createApp<Env>> | null = null;
export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    // Made on the first request, when the vars are known: CORS lets the PAGE_ORIGINS pages call the routes (with the token).
    const origins = (env.PAGE_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter((o) => o !== '');
    app ??= createApp<Env>({ runs: (e) => e.RUNS, index: (e) => e.RUN_INDEX, chat: (e) => e.CHAT, cors: { origins } });
    return app.fetch(request, env, ctx);
  },
};
