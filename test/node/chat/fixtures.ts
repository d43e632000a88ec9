/**
 * A chat for tests: a scripted model that records what it saw (and can stream its text), four
 * tools (a safe one, one that needs approval, one a person answers, one that must run once),
 * the real `DefaultChatTransport` over `chatHandler` (no socket: its fetch calls the handler),
 * and chunk helpers that check every chunk against the AI SDK's own schema.
 */
import { safeValidateTypes } from '@ai-sdk/provider-utils';
import { AbstractChat, DefaultChatTransport, readUIMessageStream, uiMessageChunkSchema } from 'ai';
import type { ChatState, ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import { expect } from 'vitest';
import { nativeToolInterpreter } from '../../../src/adapters/tool-interpreter.ts';
import { chatHandler } from '../../../src/chat/index.ts';
import type { ChatTurn } from '../../../src/chat/index.ts';
import { defineAgent, InMemoryStore, silentSink, ToolRegistry } from '../../../src/core/index.ts';
import { STANDARD_SYNTHETIC_OBSERVATIONS as SYNTHETIC } from '../../../src/core/index.ts';
import type {
  AgentDefinition,
  EventSink,
  JsonObject,
  Message,
  ModelCall,
  ModelCaller,
} from '../../../src/core/index.ts';
import type { ModelReply } from '../../../src/core/index.ts';
import type { RunRequest, RunStore, ToolCallRequest, ToolSpec } from '../../../src/core/index.ts';

/** One scripted tool call. */
export type SayCall = { readonly name: string; readonly args: Record<string, unknown>; readonly id?: string };

/** One scripted reply: text, reasoning, and one tool call (`call`) or several in one reply (`calls`). */
export type Say = {
  readonly text?: string;
  readonly reasoning?: string;
  readonly call?: SayCall;
  readonly calls?: readonly SayCall[];
};

/**
 * How a scripted model replies: streaming its reasoning and text or not, held at a gate after the
 * first delta of its text (`holdIn: 'text'`, the default) or of its reasoning.
 */
export type ChatModelOptions = {
  readonly stream?: boolean;
  /** Holds call `callSeq`; `signal` is the call's own (a gate may end with its abort, as a real model call does). */
  readonly gate?: (callSeq: number, signal: AbortSignal) => Promise<void>;
  readonly holdIn?: 'text' | 'reasoning';
};

export type ChatModel = ModelCaller & {
  /** The messages of every call, copied. */
  readonly seen: Message[][];
  /** Replies not yet given. */
  readonly left: () => number;
};

/**
 * Replies in order across every run (every turn); `stream: true` sends the reasoning, then the
 * text, as deltas of a few characters each before replying. `gate` holds each call until it
 * resolves (a streaming call after its first delta of the `holdIn` kind).
 */
export function chatModel(replies: readonly Say[], opts: ChatModelOptions = {}): ChatModel {
  const queue = [...replies];
  const seen: Message[][] = [];
  let n = 0;
  return {
    params: Object.freeze({ model: 'chat-scripted' }),
    seen,
    left: () => queue.length,
    async call(call: ModelCall): Promise<ModelReply> {
      seen.push(structuredClone([...call.messages]));
      const k = n++;
      const say = queue.shift();
      if (!say) throw new Error(`no scripted reply for call ${k}`);
      const text = say.text ?? '';
      let held = false;
      const stream = async (part: string, kind: 'text' | 'reasoning'): Promise<void> => {
        if (part === '') return;
        // The gate holds a streaming call after its first delta of one kind: mid-text, or mid-reasoning.
        call.onDelta?.(part.slice(0, 4), kind);
        if (kind === (opts.holdIn ?? 'text')) {
          held = true;
          await opts.gate?.(k, call.signal);
        }
        for (let i = 4; i < part.length; i += 4) call.onDelta?.(part.slice(i, i + 4), kind);
      };
      if (opts.stream) {
        await stream(say.reasoning ?? '', 'reasoning');
        await stream(text, 'text');
      }
      if (!held) await opts.gate?.(k, call.signal);
      const several = (say.calls ?? []).map((c, j) => ({
        id: c.id ?? `call-${k}-${j}`,
        name: c.name,
        arguments: c.args,
      }));
      const { call: c } = say;
      const one = c ? [{ id: c.id ?? `call-${k}`, name: c.name, arguments: c.args }] : [];
      const toolCalls = [...one, ...several] as ToolCallRequest[];
      const usage = { inputTokens: 10, outputTokens: 5 };
      return { callId: `reply-${k}`, text, reasoning: say.reasoning ?? null, toolCalls, usage };
    },
  };
}

export type Counters = { add: number; charge: number; send: number };

/**
 * The tools: `add` (safe), `send_email` (needs approval, never), `ask_user` (a person answers),
 * `charge` (never), and `extra` after them.
 */
export function chatTools(counters: Counters, extra: readonly ToolSpec[] = []): ToolRegistry {
  const tool = (name: string, props: Record<string, JsonObject>, rest: Partial<ToolSpec>): ToolSpec => ({
    name,
    description: `The ${name} tool`,
    parameters: { type: 'object', properties: props, required: Object.keys(props), additionalProperties: false },
    ...rest,
  });
  const number = { type: 'number' };
  const string = { type: 'string' };
  return ToolRegistry.of([
    tool(
      'add',
      { a: number, b: number },
      {
        replayPolicy: 'safe',
        handler: async (args) => {
          counters.add++;
          const { a, b } = args as { a: number; b: number };
          return String(a + b);
        },
      },
    ),
    tool(
      'send_email',
      { to: string },
      {
        needsApproval: true,
        handler: async (args) => {
          counters.send++;
          return `sent to ${(args as { to: string }).to}`;
        },
      },
    ),
    tool('ask_user', { question: string }, { answeredBy: 'human' }),
    tool(
      'charge',
      { cents: number },
      {
        handler: async () => {
          counters.charge++;
          return 'charged';
        },
      },
    ),
    ...extra,
  ]);
}

export const SYSTEM: Message = { role: 'system', content: [{ type: 'text', text: 'You are a test assistant.' }] };

export type TestChat = {
  readonly model: ChatModel;
  readonly store: RunStore;
  readonly agent: AgentDefinition;
  readonly counters: Counters;
  readonly request: (turn: ChatTurn) => RunRequest;
  readonly handle: (req: Request) => Promise<Response>;
  readonly transport: DefaultChatTransport<UIMessage>;
};

/** Options of {@link testChat}. */
export type TestChatOptions = {
  readonly store?: RunStore;
  readonly parallel?: number;
  readonly tools?: readonly ToolSpec[];
  /** The agent's own event sink (`silentSink()` when absent). */
  readonly events?: EventSink;
};

/**
 * A chat over `store` (a fresh in-memory one by default), the real `DefaultChatTransport` before
 * `chatHandler`; `parallel` is the turns' `parallelToolCalls`, `tools` more tools beside the four.
 */
export function testChat(model: ChatModel, opts: TestChatOptions = {}): TestChat {
  const store = opts.store ?? new InMemoryStore();
  const counters: Counters = { add: 0, charge: 0, send: 0 };
  const tools = chatTools(counters, opts.tools);
  const interpreter = nativeToolInterpreter('test');
  const events = opts.events ?? silentSink();
  const own = new InMemoryStore();
  const agent = defineAgent({ model, interpreter, store: own, events, syntheticObservations: SYNTHETIC });
  const request = ({ runId, goal, context }: ChatTurn): RunRequest => ({
    runId,
    budget: { maxSteps: 80, maxValidActions: 80, maxContextChars: 1_000_000 },
    executor: tools.executor(),
    tools,
    context: { run: [SYSTEM, ...context], goal },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1000,
    ...(opts.parallel === undefined ? {} : { parallelToolCalls: opts.parallel }),
  });
  const handle = chatHandler({ agent, store, request });
  const fetch = (url: RequestInfo | URL, init?: RequestInit): Promise<Response> =>
    handle(new Request(String(url), init));
  const transport = new DefaultChatTransport<UIMessage>({ api: 'http://chat.test/api/chat', fetch });
  return { model, store, agent, counters, request, handle, transport };
}

/** Every chunk of a stream, each checked against the AI SDK's `uiMessageChunkSchema`. */
export async function chunksOf(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const out: UIMessageChunk[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<UIMessageChunk>) {
    const checked = await safeValidateTypes({ value: chunk, schema: uiMessageChunkSchema });
    expect(checked.success, JSON.stringify(chunk)).toBe(true);
    out.push(chunk);
  }
  return out;
}

/** What `readUIMessageStream` assembles from `chunks` (continuing `from`, as `useChat` does answering a turn). */
export async function assemble(chunks: readonly UIMessageChunk[], from?: UIMessage): Promise<UIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(c) {
      for (const chunk of chunks) c.enqueue(structuredClone(chunk));
      c.close();
    },
  });
  let last: UIMessage | undefined;
  const errors: unknown[] = [];
  const start = from ? { message: structuredClone(from) } : {};
  for await (const m of readUIMessageStream({ stream, ...start, onError: (e) => errors.push(e) })) last = m;
  if (!last) throw new Error('no message assembled');
  return JSON.parse(JSON.stringify(last)) as UIMessage;
}

/** A user message as `useChat` sends it. */
export function userMessage(text: string, id = `u-${text}`): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/** POST `messages` through the transport; the chunks, each checked. */
export async function send(chat: TestChat, chatId: string, messages: UIMessage[]): Promise<UIMessageChunk[]> {
  return chunksOf(await post(chat, chatId, messages));
}

/** POST `messages` through the transport: the response's chunk stream. */
export function post(chat: TestChat, chatId: string, messages: UIMessage[]): Promise<ReadableStream<UIMessageChunk>> {
  const trigger = 'submit-message';
  return chat.transport.sendMessages({ chatId, messages, trigger, messageId: undefined, abortSignal: undefined });
}

/** GET `…/:chatId/stream` through the transport: the chunks, or null for a 204. */
export async function reconnect(chat: TestChat, chatId: string): Promise<UIMessageChunk[] | null> {
  const stream = await chat.transport.reconnectToStream({ chatId });
  return stream === null ? null : chunksOf(stream);
}

/** The text of a message's text parts, joined. */
export function textOf(m: UIMessage): string {
  return m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
}

type UiChatInit = {
  readonly id: string;
  readonly transport: ChatTransport<UIMessage>;
  readonly messages?: UIMessage[];
};
type ToolPartView = Record<string, unknown> & { toolCallId: string; state: string; approval?: { id: string } };

/** The AI SDK's own chat state machine (`AbstractChat`, what `useChat` drives) over a plain array. */
export class UiChat extends AbstractChat<UIMessage> {
  constructor(init: UiChatInit) {
    const state: ChatState<UIMessage> = {
      status: 'ready',
      error: undefined,
      messages: [...(init.messages ?? [])],
      pushMessage(m) {
        this.messages = [...this.messages, m];
      },
      popMessage() {
        this.messages = this.messages.slice(0, -1);
      },
      replaceMessage(i, m) {
        this.messages = this.messages.map((old, j) => (j === i ? m : old));
      },
      snapshot: <T>(thing: T): T => structuredClone(thing),
    };
    super({ id: init.id, transport: init.transport, state });
  }

  /** The last message, as plain JSON. */
  get last(): UIMessage {
    return JSON.parse(JSON.stringify(this.messages.at(-1))) as UIMessage;
  }
}

/** The tool part of a message that has one. */
export function toolPart(m: UIMessage): ToolPartView {
  const part = m.parts.find((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool');
  if (!part) throw new Error(`no tool part in ${JSON.stringify(m)}`);
  return part as never;
}

/** Every tool part of a message, in order. */
export function toolParts(m: UIMessage): ToolPartView[] {
  return m.parts.filter((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool') as never;
}

/** A promise with its resolve function. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Read a stream to its end in the background; `done` has every chunk. */
export function drain<T>(stream: ReadableStream<T>): Promise<T[]> {
  return (async () => {
    const out: T[] = [];
    for await (const c of stream as unknown as AsyncIterable<T>) out.push(c);
    return out;
  })();
}
