/**
 * The chat examples' agent: a deterministic local model (no network, no API key) that streams
 * its replies word by word, and four tools — `weather` (safe to run again), `ask_user` (the
 * person answers it), `send_email` (the person approves it; `replayPolicy: 'never'`, so a
 * crash mid-send is settled by the person, never resent) and `helper`, a sub-agent (the same
 * model with the first three tools) whose own approvals reach the person through the turn. A
 * message naming several addresses gets one `send_email` call per address in one reply: several
 * approvals in one step. The same module runs in the page (`?mode=local`) and in the Node server
 * (examples/node-chat), so both hosts give the same turns.
 *
 * A reply is a pure function of the messages the model is shown: a resumed turn that re-issues
 * a model call gets the same reply, streamed again.
 */
import { nativeToolInterpreter } from '../../../src/adapters/tool-interpreter.ts';
import type { ChatTurn } from '../../../src/chat/index.ts';
import { agentTool, defineAgent, STANDARD_SYNTHETIC_OBSERVATIONS, ToolRegistry } from '../../../src/core/index.ts';
import type {
  AgentConfig,
  AgentDefinition,
  EventSink,
  JsonObject,
  Message,
  ModelCall,
  ModelCaller,
  ModelReply,
  RunRequest,
  RunStore,
  ToolSpec,
} from '../../../src/core/index.ts';

/**
 * Where a turn can be held, for a person (or a test) to act while it waits: `text` after the
 * first words of every streamed reply, `send` inside `send_email` right after the email went.
 */
export type HoldPoint = 'text' | 'send';

/** An email `send_email` sends. */
export type Email = { readonly to: string; readonly subject: string; readonly body: string };

/** What the agent's model and tools act on: the host's side of the examples. */
export type ChatWorld = {
  /** Milliseconds between two streamed words (0: as fast as possible). */
  readonly delayMs: number;
  /** Delivers an email (the Node server appends it to `sent.log`; the page to localStorage). */
  readonly sendEmail: (email: Email) => void | Promise<void>;
  /** Whether `point` is held now: the turn waits there, checking again every few milliseconds. */
  readonly held?: (point: HoldPoint) => boolean;
};

const SYSTEM: Message = {
  role: 'system',
  content: [{ type: 'text', text: 'You are a helpful assistant with three tools.' }],
};

const ADDRESSES = /[\w.+-]+@[\w-]+(?:\.[\w-]+)*/g;
const HELPER = /^ask (?:the|a) helper to (.+)$/i;
const CITY = /weather in ([A-Za-z][A-Za-z -]*)/i;

/** Made-up but stable temperatures (no network). */
const TEMPERATURES: Readonly<Record<string, number>> = { oslo: 4, lisbon: 19, cairo: 31, reykjavik: 2, singapore: 29 };

/** The temperature of a city, in °C (15 for a city it does not know). */
export function temperatureOf(city: string): number {
  return TEMPERATURES[city.trim().toLowerCase()] ?? 15;
}

/** One tool call the model makes. */
export type SayCall = { readonly name: string; readonly args: JsonObject };

/** What the model says next: text, reasoning, and a tool call or (`calls`) several in one reply. */
export type Say = {
  readonly text: string;
  readonly reasoning: string;
  readonly call?: SayCall;
  readonly calls?: readonly SayCall[];
};

/** The sentence a tool result opens with when a person approved the call with other arguments. */
const CHANGED = /^A person changed the arguments of this call before it ran, to .*\.\n/;

/** A tool result without that sentence: what the tool said. */
const outcomeOf = (result: string | undefined): string | undefined => result?.replace(CHANGED, '');

/** Whether an email went: `Sent to …` from the tool, `It happened…` from a person who settled a send. */
const went = (result: string | undefined): boolean =>
  result !== undefined && /^(Sent to |It happened)/.test(outcomeOf(result) ?? '');

/** The turn's request (the last user message with text) and the tool results after it. */
function turnOf(messages: readonly Message[]): { request: string; results: string[] } {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(' ');
    if (text === '') continue;
    const later = messages.slice(i + 1);
    const results = later.flatMap((n) => n.content.flatMap((b) => (b.type === 'tool_result' ? [b.text] : [])));
    return { request: text, results };
  }
  return { request: '', results: [] };
}

/** Several emails in one reply, one call each; once answered, what became of each. */
function emailEach(addresses: readonly string[], request: string, results: readonly string[], reasoning: string): Say {
  if (results.length === 0) {
    const subject = 'A note from PolyLoop';
    const calls = addresses.map((to) => ({ name: 'send_email', args: { to, subject, body: request } }));
    return { text: `I will email ${addresses.join(' and ')} once you approve each.`, reasoning, calls };
  }
  const sent = addresses.filter((_, i) => went(results[i]));
  const notSent = addresses.flatMap((to, i) => (went(results[i]) ? [] : [`not to ${to} (${results[i]})`]));
  const text = sent.length === 0 ? 'I sent no email' : `Done: the note went to ${sent.join(' and ')}`;
  return { text: `${[text, ...notSent].join(', ')}.`, reasoning };
}

/**
 * The policy. "ask the helper to …" → `helper`, a sub-agent given the rest as its task; "email
 * someone@example.com" → `send_email` (after approval; one call per address when it names
 * several), "weather in Oslo" → `weather`, "ask me" → `ask_user`; anything else → a reply that
 * repeats the message.
 */
export function policy(messages: readonly Message[]): Say {
  const { request, results } = turnOf(messages);
  const [result] = results;
  const seen = result === undefined ? 'Nothing ran yet.' : `The tool said "${result}".`;
  const reasoning = `The user wrote "${request}". ${seen}`;
  const task = HELPER.exec(request.trim())?.[1];
  if (task !== undefined) {
    if (result === undefined)
      return { text: 'I will ask a helper to do that.', reasoning, call: { name: 'helper', args: { task } } };
    return { text: `The helper says: ${result}`, reasoning };
  }
  const addresses = request.match(ADDRESSES) ?? [];
  const [to] = addresses;
  if (to !== undefined && /\bmail\b|\bemail\b/i.test(request)) {
    if (addresses.length > 1) return emailEach(addresses, request, results, reasoning);
    if (result === undefined) {
      const args = { to, subject: 'A note from PolyLoop', body: request };
      return { text: `I will email ${to} once you approve.`, reasoning, call: { name: 'send_email', args } };
    }
    // A person who changed the call before approving it: say where the note really went.
    const edited =
      result !== undefined && CHANGED.test(result) ? /^Sent to (.+)\.$/.exec(outcomeOf(result) ?? '') : null;
    if (edited)
      return { text: `Done: you changed the call, and the note went to ${edited[1]}, exactly once.`, reasoning };
    if (went(result)) return { text: `Done: the note went to ${to}, and it went exactly once.`, reasoning };
    return { text: `I did not send the email (${result}).`, reasoning };
  }
  const city = CITY.exec(request)?.[1]?.trim();
  if (city !== undefined) {
    if (result === undefined) {
      return { text: `Let me look up the weather in ${city}.`, reasoning, call: { name: 'weather', args: { city } } };
    }
    return { text: `Right now: ${result}.`, reasoning };
  }
  if (/\bask me\b/i.test(request)) {
    if (result === undefined) {
      const args = { question: 'What is your favourite colour?' };
      return { text: 'I need to ask you something first.', reasoning, call: { name: 'ask_user', args } };
    }
    return { text: `Your favourite colour is ${result}. Noted.`, reasoning };
  }
  return { text: `You said: "${request}". This reply streams in word by word, so you can watch it arrive.`, reasoning };
}

/** Resolves once `point` is no longer held (at once when it is not held). */
async function waitWhileHeld(world: ChatWorld, point: HoldPoint, signal: AbortSignal): Promise<void> {
  while (world.held?.(point) === true) await pause(10, signal);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The local model: {@link policy}'s reply, its text streamed word by word (held after the first
 * word while `text` is held).
 */
export function localChatModel(world: ChatWorld): ModelCaller {
  return {
    params: Object.freeze({ model: 'local-chat-policy' }),
    async call(call: ModelCall): Promise<ModelReply> {
      const say = policy(call.messages);
      const words = say.text.match(/\S+\s*/g) ?? [];
      for (const [i, word] of words.entries()) {
        if (i > 0 && world.delayMs > 0) await pause(world.delayMs, call.signal);
        call.onDelta?.(word);
        if (i === 0) await waitWhileHeld(world, 'text', call.signal);
      }
      // The ids are a function of the messages, so a re-issued call names its tool calls the same.
      const id = `call_${call.messages.length}`;
      const one = say.call ? [{ id, name: say.call.name, arguments: say.call.args }] : [];
      const several = (say.calls ?? []).map((c, j) => ({ id: `${id}_${j}`, name: c.name, arguments: c.args }));
      const toolCalls = [...one, ...several];
      const usage = { inputTokens: 0, outputTokens: words.length };
      return { callId: null, text: say.text, reasoning: say.reasoning, toolCalls, usage };
    },
  };
}

const text = { type: 'string' } as const;
const object = (props: Record<string, JsonObject>): JsonObject => ({
  type: 'object',
  properties: props,
  required: Object.keys(props),
  additionalProperties: false,
});

function tools(world: ChatWorld): ToolSpec[] {
  const specs: ToolSpec[] = [
    {
      name: 'weather',
      description: 'The current temperature of a city, in °C.',
      parameters: object({ city: text }),
      replayPolicy: 'safe', // a lookup: running it again after a crash is harmless
      handler: async (args) => `${String(args['city'])}: ${temperatureOf(String(args['city']))}°C`,
    },
    {
      name: 'ask_user',
      description: 'Ask the person a question; their answer is the result.',
      parameters: object({ question: text }),
      answeredBy: 'human',
    },
    {
      name: 'send_email',
      description: 'Send an email. The person approves each one before it goes.',
      parameters: object({ to: text, subject: text, body: text }),
      needsApproval: true,
      replayPolicy: 'never', // an email must not go twice: after a crash mid-send, the person settles it
      handler: async (args, { signal }) => {
        await world.sendEmail({ to: String(args['to']), subject: String(args['subject']), body: String(args['body']) });
        await waitWhileHeld(world, 'send', signal);
        return `Sent to ${String(args['to'])}.`;
      },
    },
  ];
  return specs;
}

/** What a turn's request and the helper's request share: everything but the run id, tools and context. */
const REQUEST = {
  budget: { maxSteps: 8, maxValidActions: 4, maxContextChars: 200_000 },
  injections: {},
  modelBinding: {},
  modelReplayPolicy: 'safe',
  observationTemplate: '{observation}',
  toolRenderStyle: 'none',
  cancelGraceMs: 1000,
} as const;

/**
 * `helper`: a sub-agent (the same model with `tools`) whose run sits on `store` beside the
 * turn's; the approvals it asks for pause the turn and show on the helper's tool part.
 */
function helperTool(agent: Omit<AgentConfig, 'defaults'>, tools: ToolRegistry): ToolSpec {
  const child = defineAgent({
    ...agent,
    defaults: { ...REQUEST, executor: tools.executor(), tools, context: { run: [SYSTEM] } },
  });
  return agentTool({
    name: 'helper',
    description: 'Hand a task to a helper (a sub-agent with the same tools); its final answer is the result.',
    parameters: object({ task: text }),
    agent: child,
    request: (args) => ({ goal: String(args['task']) }),
  });
}

/** The chat's agent and the builder of each turn's request, over `store`. */
export function chatAgent(
  store: RunStore,
  events: EventSink,
  world: ChatWorld,
): { agent: AgentDefinition; request: (turn: ChatTurn) => RunRequest } {
  const model = localChatModel(world);
  const interpreter = nativeToolInterpreter('local-chat-tools');
  const syntheticObservations = STANDARD_SYNTHETIC_OBSERVATIONS;
  const config = { model, interpreter, store, events, syntheticObservations };
  const agent = defineAgent(config);
  const own = tools(world);
  const registry = ToolRegistry.of([...own, helperTool(config, ToolRegistry.of(own))]);
  const request = ({ runId, goal, context }: ChatTurn): RunRequest => ({
    runId,
    ...REQUEST,
    executor: registry.executor(),
    tools: registry,
    context: { run: [SYSTEM, ...context], goal },
    // A reply may email several people at once: each call asks its own approval, all in one step.
    parallelToolCalls: 4,
  });
  return { agent, request };
}
