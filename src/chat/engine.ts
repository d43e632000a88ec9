/**
 * The chat engine: turns as runs, streams as replays of their logs followed live. Every chat
 * host (HTTP handler, in-page transport, a Worker route) wraps this one piece. Which turn a
 * POST means, where its history comes from and how streams attach: decision 0055.
 * @module
 */
import { acceptedReplies, conversationOf, defineAgent, InvalidInputError, InvalidRequestError, readRunLog, resume, run, RunLockedError } from '../core/index.ts';
import type { AgentDefinition, InputReply, LogRecord, Message, RunRequest, RunStore } from '../core/index.ts';
import type { UIMessage, UIMessageChunk } from 'ai';
import { parseChatPost } from './body.ts';
import type { ChatPost } from './body.ts';
import { LiveTurn } from './live-turn.ts';
import { loadChat, userMessageOf } from './load.ts';
import { checkChatOptions } from './options.ts';
import { answeredIds, replyOfParts } from './replies.ts';
import { TurnChunks } from './turn-chunks.ts';
import { assistantMessageId, chatRunId, checkChatId } from './turn-id.ts';
import type { ChatCallOptions, ChatEngine, ChatEngineOptions, ChatTurn } from './types.ts';

/** How a driver starts, or null when the turn needs none (it ended, or waits for a reply it did not get). */
type Plan = { readonly mode: 'run' | 'resume'; readonly request: RunRequest; readonly input: InputReply | null } | null;

/**
 * The transport-free chat core: `post` a `DefaultChatTransport` body (or `{ id, input }`) and
 * get the turn's UI message stream; `reconnect` to the latest turn; `load` the conversation.
 * `chatHandler` and `localChatTransport` are thin wrappers over it.
 *
 * @example
 * const chat = chatEngine({ agent, store, request });
 * const stream = await chat.post(await req.json());
 */
export function chatEngine(options: ChatEngineOptions): ChatEngine {
  checkChatOptions(options, ['agent', 'store', 'request', 'waitUntil'], 'chatEngine');
  return new Engine(options);
}

class Engine implements ChatEngine {
  readonly #agent: AgentDefinition;
  readonly #store: RunStore;
  readonly #request: ChatEngineOptions['request'];
  readonly #waitUntil: ((p: Promise<unknown>) => void) | undefined;
  /** The turns this engine has open: one driver per turn in this process. */
  readonly #live = new Map<string, LiveTurn>();
  /** The highest turn known to exist, per chat: where the search for the latest turn starts. */
  readonly #latest = new Map<string, number>();

  constructor(options: ChatEngineOptions) {
    this.#agent = options.agent;
    this.#store = options.store;
    this.#request = options.request;
    this.#waitUntil = options.waitUntil;
  }

  async post(body: unknown, opts: ChatCallOptions = {}): Promise<ReadableStream<UIMessageChunk>> {
    const post = parseChatPost(body);
    if (post.kind === 'turn') return this.#turn(post, opts);
    if (post.kind === 'continue') return this.#continue(post, opts);
    return this.#input(post, opts);
  }

  async reconnect(chatId: string, opts: ChatCallOptions = {}): Promise<ReadableStream<UIMessageChunk> | null> {
    checkChatId(chatId);
    const turn = await this.#latestTurn(chatId);
    if (turn === 0) return null;
    const runId = chatRunId(chatId, turn);
    const live = await this.#open(runId, (records) => this.#carryOn(chatId, turn, records, null));
    // A turn that ended, or waits for a person, has nothing to resume.
    if (live.driving === null) return null;
    return live.follow(assistantMessageId(runId), { from: 'start' }, opts.signal);
  }

  load(chatId: string): Promise<UIMessage[]> {
    return loadChat(this.#store, chatId);
  }

  /** A new turn, or a repeated POST of one: the whole turn, from its log, then live. */
  async #turn(post: Extract<ChatPost, { kind: 'turn' }>, opts: ChatCallOptions): Promise<ReadableStream<UIMessageChunk>> {
    const runId = chatRunId(post.chatId, post.turn);
    const live = await this.#open(runId, (records) => (records.length > 0 ? this.#carryOn(post.chatId, post.turn, records, null) : this.#newTurn(post)));
    return live.follow(assistantMessageId(runId), { from: 'start' }, opts.signal);
  }

  /** The turn's assistant message came back with answers: carry out the one its open request awaits, stream what follows. */
  async #continue(post: Extract<ChatPost, { kind: 'continue' }>, opts: ChatCallOptions): Promise<ReadableStream<UIMessageChunk>> {
    const runId = chatRunId(post.chatId, post.turn);
    const live = await this.#openWithReply(runId, (records) => {
      const pending = readRunLog(records).pending;
      if (pending === null) return null;
      const chunks = new TurnChunks(runId, () => undefined);
      for (const rec of records) chunks.record(rec);
      const input = replyOfParts(post.parts, runId, pending, chunks.toolOf(pending.stepIndex)?.toolCallId ?? null);
      if (input === null) throw new InvalidInputError(runId, `the turn awaits the ${pending.kind} ${pending.resultId}, and the message answers nothing of it`);
      return input;
    }, post.chatId, post.turn);
    const answered = answeredIds(post.parts, runId, (toolCallId) => live.chunks.requestOfTool(toolCallId));
    const at = live.transcript.afterReplies(answered) ?? live.driverFrom;
    return live.follow(assistantMessageId(runId), { from: 'index', index: at }, opts.signal);
  }

  /** `{ id, input }`: a reply to the open request of the chat's latest turn. */
  async #input(post: Extract<ChatPost, { kind: 'input' }>, opts: ChatCallOptions): Promise<ReadableStream<UIMessageChunk>> {
    const turn = await this.#latestTurn(post.chatId);
    if (turn === 0) throw new InvalidRequestError(`chat ${JSON.stringify(post.chatId)} has no turn to answer`, { source: 'chat' });
    const runId = chatRunId(post.chatId, turn);
    const live = await this.#openWithReply(runId, (records) => (readRunLog(records).pending === null ? null : post.input), post.chatId, turn);
    const at = live.transcript.afterReplies([post.input.resultId]);
    if (at === null && live.driving === null) throw new InvalidInputError(runId, `the turn awaits no input ${post.input.resultId}`);
    return live.follow(assistantMessageId(runId), { from: 'index', index: at ?? live.driverFrom }, opts.signal);
  }

  /**
   * Open a turn to carry out a reply that `replyOf` reads from its log (null: the turn awaits
   * none, so the reply may be one already carried out). A turn this process drives awaits
   * nothing; one that another stream opened without a driver is opened again for the reply.
   */
  async #openWithReply(runId: string, replyOf: (records: readonly LogRecord[]) => InputReply | null, chatId: string, turn: number): Promise<LiveTurn> {
    const plan = async (records: readonly LogRecord[]): Promise<Plan> => {
      if (records.length === 0) throw new InvalidRequestError(`turn ${turn} of chat ${JSON.stringify(chatId)} has not started`, { source: 'chat' });
      const input = replyOf(records);
      if (input !== null) checkFits(runId, records, input);
      return this.#carryOn(chatId, turn, records, input);
    };
    const live = await this.#open(runId, plan);
    if (live.driving !== null || !live.transcript.closed) return live;
    // Opened by a stream that carried no reply (a reconnect) and found the turn waiting: open it again with ours.
    return this.#open(runId, plan);
  }

  /**
   * The turn of `runId` as this process has it: the live one, or one made from its log, with a
   * driver when `plan` gives one. A turn with no driver leaves the registry at once.
   */
  async #open(runId: string, plan: (records: readonly LogRecord[]) => Promise<Plan>): Promise<LiveTurn> {
    const found = this.#live.get(runId);
    if (found) {
      await found.ready;
      return found;
    }
    const live = new LiveTurn(runId);
    this.#live.set(runId, live);
    live.ready = (async () => {
      try {
        const records = await this.#store.readLog(runId);
        live.replay(records);
        const p = await plan(records);
        if (p === null) {
          live.endFromLog(records);
          this.#live.delete(runId);
          return;
        }
        this.#drive(live, p);
      } catch (e) {
        this.#live.delete(runId);
        throw e;
      }
    })();
    await live.ready;
    return live;
  }

  #drive(live: LiveTurn, plan: NonNullable<Plan>): void {
    const base = this.#agent;
    const done = live.drive((model, events) => {
      // The event sink is not part of a run's identity, and the model keeps its params: the same run as with `agent`.
      const agent = defineAgent({ model: model(base.model), interpreter: base.interpreter, store: this.#store, events: events(base.events), syntheticObservations: base.syntheticObservations });
      if (plan.mode === 'run') return run(agent, plan.request);
      return resume(agent, plan.request, plan.input === null ? {} : { input: plan.input });
    }, plan.input);
    const settled = done.finally(() => this.#live.delete(live.runId));
    this.#waitUntil?.(settled);
  }

  /** A turn with a log: resume it when it is in flight, or when it awaits input and `input` answers it. */
  async #carryOn(chatId: string, turn: number, records: readonly LogRecord[], input: InputReply | null): Promise<Plan> {
    const view = readRunLog(records);
    if (view.state === 'ended' || (view.state === 'awaiting_input' && input === null)) return null;
    const request = await this.#turnRequest(chatId, turn, records);
    return { mode: 'resume', request, input: view.state === 'awaiting_input' ? input : null };
  }

  /** A turn never run: its history from the previous turn's log (a turn waiting for a person is cancelled first). */
  async #newTurn(post: Extract<ChatPost, { kind: 'turn' }>): Promise<Plan> {
    const { chatId, turn } = post;
    const context = turn === 1 ? [] : await this.#previousContext(chatId, turn - 1);
    const request = await this.#buildRequest({ chatId, turn, runId: chatRunId(chatId, turn), goal: [post.goal], context });
    this.#latest.set(chatId, Math.max(turn, this.#latest.get(chatId) ?? 0));
    return { mode: 'run', request, input: null };
  }

  /** The history turn `turn` ended with, once it has ended; a turn waiting for input is cancelled (recorded in its log). */
  async #previousContext(chatId: string, turn: number): Promise<Message[]> {
    const runId = chatRunId(chatId, turn);
    if (this.#live.has(runId)) throw new RunLockedError(runId, 'the previous turn of this chat is still running');
    const records = await this.#store.readLog(runId);
    if (records.length === 0) throw new InvalidRequestError(`chat ${JSON.stringify(chatId)} has no turn ${turn}; its messages do not match the server's`, { source: 'chat' });
    const view = readRunLog(records);
    if (view.pending !== null) {
      const cancel: InputReply = { kind: 'cancel', resultId: view.pending.resultId };
      const live = await this.#open(runId, async (recs) => this.#carryOn(chatId, turn, recs, readRunLog(recs).pending === null ? null : cancel));
      await live.driving;
      if (readRunLog(await this.#store.readLog(runId)).ended === null) throw new RunLockedError(runId, 'the previous turn waits for input and could not be cancelled');
    } else if (view.state !== 'ended') {
      throw new RunLockedError(runId, 'the previous turn of this chat has not ended; reconnect to it first');
    }
    return conversationOf(records);
  }

  /** The request of a turn that has a log: rebuilt from its user message and the previous turn's history. */
  async #turnRequest(chatId: string, turn: number, records: readonly LogRecord[]): Promise<RunRequest> {
    const user = userMessageOf(records);
    if (user === null) throw new InvalidRequestError(`turn ${turn} of chat ${JSON.stringify(chatId)} has no user message in its log`, { source: 'chat' });
    const context = turn === 1 ? [] : conversationOf(await this.#store.readLog(chatRunId(chatId, turn - 1)));
    return this.#buildRequest({ chatId, turn, runId: chatRunId(chatId, turn), goal: [user], context });
  }

  async #buildRequest(turn: ChatTurn): Promise<RunRequest> {
    const request = await this.#request(Object.freeze(turn));
    if (typeof request !== 'object' || request === null || request.runId !== turn.runId) {
      throw new InvalidRequestError(`chat: request() must return a request whose runId is the turn's (${JSON.stringify(turn.runId)})`, { source: 'chat' });
    }
    return request;
  }

  /** The chat's latest turn (0: none). Turns are numbered without gaps, so a doubling search then a halving one finds it. */
  async #latestTurn(chatId: string): Promise<number> {
    let lo = this.#latest.get(chatId) ?? 0;
    let step = 1;
    while (await this.#exists(chatId, lo + step)) {
      lo += step;
      step *= 2;
    }
    let hi = lo + step;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (await this.#exists(chatId, mid)) lo = mid;
      else hi = mid;
    }
    if (lo > 0) this.#latest.set(chatId, lo);
    return lo;
  }

  async #exists(chatId: string, turn: number): Promise<boolean> {
    const runId = chatRunId(chatId, turn);
    return this.#live.has(runId) || (await this.#store.readLog(runId)).length > 0;
  }
}

/** A reply that does not fit the open request is refused before anything is written or streamed. */
function checkFits(runId: string, records: readonly LogRecord[], input: InputReply): void {
  const pending = readRunLog(records).pending;
  if (pending === null) return;
  if (input.resultId !== pending.resultId) throw new InvalidInputError(runId, `the turn awaits ${pending.resultId}, not ${input.resultId}`);
  const accepted = acceptedReplies(pending.kind, pending.target);
  if (!accepted.includes(input.kind)) throw new InvalidInputError(runId, `a ${pending.kind} request accepts ${accepted.join(', ')}, not ${input.kind}`);
}
