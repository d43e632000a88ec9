/**
 * The public shapes of `polyloop/chat`: what a host hands the chat (agent, store, the turn's
 * request) and what one turn looks like to the code that builds its request.
 * @module
 */
import type { AgentDefinition, Message, RunRequest, RunStore } from '../core/index.ts';
import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';

/** One turn of a chat, as {@link ChatOptions.request} receives it. */
export type ChatTurn = {
  /** The chat's id (`useChat`'s `id`): 1–128 characters of `[A-Za-z0-9_-]`, never `.` or `..`. */
  readonly chatId: string;
  /** 1 for the first user message of the chat, 2 for the second, … */
  readonly turn: number;
  /** The turn's run id, derived from `chatId` and `turn` (see {@link chatRunId}). */
  readonly runId: string;
  /** The new user message, as one message (its text parts, one text block each). */
  readonly goal: readonly Message[];
  /**
   * The conversation before this turn: the history the previous turn's run ended with (its
   * context, every completed step's turns, its final reply), read from that run's log, without
   * system messages. `[]` for the first turn. Never what the client sent.
   */
  readonly context: readonly Message[];
};

/**
 * What every chat host takes: the agent that runs each turn, the store the turns live in, and
 * the function that builds a turn's request.
 */
export type ChatOptions = {
  /**
   * Runs every turn. Its model, interpreter and synthetic texts are used as they are; the chat
   * runs each turn on `store` (not the agent's own store) and adds its own event sink next to
   * the agent's (the event sink is not part of a run's identity).
   */
  readonly agent: AgentDefinition;
  /** Where the chat's turns live: one run per turn, run ids from {@link chatRunId}. */
  readonly store: RunStore;
  /**
   * The turn's `RunRequest`. It must use `turn.runId` as its `runId` and keep `turn.goal`'s
   * message as the last user message of `context.goal` (the chat reads the user's message back
   * from there); it usually puts a system prompt and `turn.context` into `context.run`.
   * Called once per new turn and again, with the same turn, whenever the turn is resumed — it
   * must give the same request for the same turn.
   *
   * @example
   * request: ({ runId, goal, context }) => ({ ...base, runId, context: { run: [system, ...context], goal } })
   */
  readonly request: (turn: ChatTurn) => RunRequest | Promise<RunRequest>;
};

/** Options of {@link chatHandler}. */
export type ChatHandlerOptions = ChatOptions & {
  /**
   * Told about every turn the handler drives, so a host that would stop when the response
   * ends (a Worker: `ctx.waitUntil`) keeps the turn running after the client went away.
   */
  readonly waitUntil?: (promise: Promise<unknown>) => void;
  /** Largest POST body accepted, in bytes (default 1 MiB); a larger one is refused with 413. */
  readonly maxBodyBytes?: number;
};

/** Options of {@link localChatTransport}. */
export type LocalChatTransportOptions = ChatOptions;

/** Options of {@link ChatEngine.stop}. */
export type ChatStopOptions = {
  /**
   * The run id of the turn meant (`message.metadata.runId`, or the assistant message's id without
   * `:assistant`): refused unless it is the chat's latest turn, so a Stop clicked on a page that
   * fell behind never stops a later turn. Absent: the latest turn.
   */
  readonly runId?: string;
  /** Why (at most 2,000 characters): kept in the turn's log and shown with the stopped turn. */
  readonly reason?: string;
};

/** What {@link ChatEngine.stop} did. */
export type ChatStopResult = {
  /** The turn's run id. */
  readonly runId: string;
  /**
   * `stopped`: the turn has ended `cancelled` with this stop (it was driven here, or driven now
   * because nothing drove it); `requested`: another process or tab drives it and ends it within
   * a second of the request; `ended`: it had ended, nothing was stopped.
   */
  readonly state: 'stopped' | 'requested' | 'ended';
};

/** The `ChatTransport` of {@link localChatTransport}, with the stop of a turn the page runs. */
export type LocalChatTransport = ChatTransport<UIMessage> & {
  /** As {@link ChatEngine.stop}: stop the chat's latest turn. */
  stop(chatId: string, options?: ChatStopOptions): Promise<ChatStopResult>;
};

/** Options of {@link chatEngine}. */
export type ChatEngineOptions = ChatOptions & {
  /** As {@link ChatHandlerOptions.waitUntil}. */
  readonly waitUntil?: (promise: Promise<unknown>) => void;
};

/** Options of one call of the engine. */
export type ChatCallOptions = {
  /** Ends this stream only; the turn itself goes on (it is durable, and another stream may follow it). */
  readonly signal?: AbortSignal;
};

/**
 * The transport-free core every chat host wraps: `chatHandler` in HTTP and SSE,
 * `localChatTransport` as a `ChatTransport`. One engine keeps the turns it drives in memory, so
 * a second stream of the same turn attaches to it instead of starting another driver.
 */
export interface ChatEngine {
  /**
   * A `DefaultChatTransport` POST body (`{ id, messages, trigger, messageId }`) or a reply to
   * the open request of the chat's latest turn (`{ id, runId, input }`: that turn's run id, which
   * is required, and an `InputReply`): the turn's UI message stream. Rejects with
   * `InvalidRequestError` for a malformed body (a reply without `runId`), `InvalidInputError` for
   * a reply whose `runId` is not the latest turn's or that fits no open request,
   * `RunLockedError` when the turn cannot be driven now (the previous turn still runs, another
   * process drives it); nothing is written then.
   */
  post(body: unknown, opts?: ChatCallOptions): Promise<ReadableStream<UIMessageChunk>>;
  /**
   * The stream of the chat's latest turn, replayed from its log and then followed live (a turn
   * in flight that nothing drives is resumed here); null when no turn runs (none, ended, or
   * awaiting input). Rejects with `InvalidRequestError` for a malformed chat id.
   */
  reconnect(chatId: string, opts?: ChatCallOptions): Promise<ReadableStream<UIMessageChunk> | null>;
  /** As {@link loadChat} over the engine's store. */
  load(chatId: string): Promise<UIMessage[]>;
  /**
   * Stop the chat's latest turn with `requestStop` (the store must keep stop requests): a turn
   * this engine drives ends `cancelled` with the stop, and resolves then; one nothing drives
   * (it waits for a person, or its process died) is driven to that end now, before any model
   * call or action; one another process drives ends there. Its streams end with `finish`
   * (`messageMetadata.stopRequest`), its open tool parts closed saying it was stopped. Rejects
   * with `InvalidRequestError` for a chat without turns or a malformed option, `InvalidInputError`
   * for a `runId` that is not the latest turn's.
   */
  stop(chatId: string, options?: ChatStopOptions): Promise<ChatStopResult>;
}
