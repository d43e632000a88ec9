/**
 * The chat engine: turns as runs, streams as replays of their logs followed live. Every chat
 * host (HTTP handler, in-page transport, a Worker route) wraps this one piece. Which turn a
 * POST means, where its history comes from and how streams attach: decision 0055.
 * @module
 */
import {
  defineAgent,
  innermostRequest,
  InvalidInputError,
  InvalidRequestError,
  readRunLog,
  requestStop,
  resume,
  run,
  RunLockedError,
} from '../core/index.ts';
import { checkEdit, checkOptionKeys, conversationOf } from '../core/internal-entry.ts';
import type { OptionKeys } from '../core/internal-entry.ts';
import type { AgentDefinition, InputReply, LogRecord, Message, RunRequest, RunStore } from '../core/index.ts';
import type { UIMessage, UIMessageChunk } from 'ai';
import { parseChatPost } from './body.ts';
import type { ChatPost } from './body.ts';
import { LiveTurn } from './live-turn.ts';
import { loadChat, userMessageOf } from './load.ts';
import { CHAT_ENGINE_KEYS, checkChatOptions } from './options.ts';
import { answeredIds, checkFits, replyOfParts } from './replies.ts';
import { TurnChunks } from './turn-chunks.ts';
import { assistantMessageId, chatRunId, checkChatId } from './turn-id.ts';
import type {
  ChatCallOptions,
  ChatEngine,
  ChatEngineOptions,
  ChatStopOptions,
  ChatStopResult,
  ChatTurn,
} from './types.ts';

/**
 * How a driver starts, or null when the turn needs none (it ended, or waits for a reply it did not
 * get). `inputs`: the replies it carries out, one resume each, in order (a step with several calls
 * may await several requests).
 */
type Plan = {
  readonly mode: 'run' | 'resume';
  readonly request: RunRequest;
  readonly inputs: readonly InputReply[];
} | null;
type Planner = (records: readonly LogRecord[]) => Promise<Plan>;
type ReplyOf = (records: readonly LogRecord[]) => readonly InputReply[];
type Stream = ReadableStream<UIMessageChunk>;
type TurnPost = Extract<ChatPost, { kind: 'turn' }>;
type ContinuePost = Extract<ChatPost, { kind: 'continue' }>;
type InputPost = Extract<ChatPost, { kind: 'input' }>;

const refuse = (message: string): InvalidRequestError => new InvalidRequestError(message, { source: 'chat' });
const STOP_OPTIONS: OptionKeys<ChatStopOptions> = { runId: true, reason: true };
const chatName = (chatId: string): string => `chat ${JSON.stringify(chatId)}`;

/**
 * The transport-free chat core: `post` a `DefaultChatTransport` body (or `{ id, runId, input }`) and
 * get the turn's UI message stream; `reconnect` to the latest turn; `load` the conversation.
 * `chatHandler` and `localChatTransport` are thin wrappers over it.
 *
 * @example
 * const chat = chatEngine({ agent, store, request });
 * const stream = await chat.post(await req.json());
 */
export function chatEngine(options: ChatEngineOptions): ChatEngine {
  checkChatOptions(options, CHAT_ENGINE_KEYS, 'chatEngine');
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

  async post(body: unknown, opts: ChatCallOptions = {}): Promise<Stream> {
    const post = parseChatPost(body);
    if (post.kind === 'turn') return this.#turn(post, opts);
    if (post.kind === 'continue') return this.#continue(post, opts);
    return this.#input(post, opts);
  }

  async reconnect(chatId: string, opts: ChatCallOptions = {}): Promise<Stream | null> {
    checkChatId(chatId);
    const turn = await this.#latestTurn(chatId);
    if (turn === 0) return null;
    const runId = chatRunId(chatId, turn);
    const { live } = await this.#open(runId, (records) => this.#carryOn(chatId, turn, records, []));
    // A turn that ended, or waits for a person, has nothing to resume.
    if (live.driving === null) return null;
    return live.follow(assistantMessageId(runId), { from: 'start' }, opts.signal);
  }

  load(chatId: string): Promise<UIMessage[]> {
    return loadChat(this.#store, chatId);
  }

  /**
   * Stop the chat's latest turn: the request made durable first, then its driver here awaited,
   * or — nothing drives it here — the turn driven now, which ends it before anything runs (a
   * driver in another process holds the turn: it sees the stop itself). Decision 0078.
   */
  async stop(chatId: string, options: ChatStopOptions = {}): Promise<ChatStopResult> {
    checkChatId(chatId);
    checkOptionKeys(options, STOP_OPTIONS, 'stop');
    const turn = await this.#latestTurn(chatId);
    if (turn === 0) throw refuse(`${chatName(chatId)} has no turn to stop`);
    const runId = chatRunId(chatId, turn);
    if (options.runId !== undefined && options.runId !== runId) {
      throw new InvalidInputError(options.runId, `not the latest turn of ${chatName(chatId)} (that is ${runId})`);
    }
    // Checks the reason, and does nothing to a turn that has ended.
    await requestStop(this.#store, runId, options.reason);
    const ended = async () => readRunLog(await this.#store.readLog(runId)).ended;
    const before = await ended();
    if (before !== null) return { runId, state: 'ended' };
    // Twice at most: a driver here may have paused for a person just before it saw the stop.
    for (let i = 0; i < 2; i++) {
      const live = this.#live.get(runId);
      if (live !== undefined) await live.ready.catch(() => undefined);
      const driving = live?.driving ?? (await this.#driveToStop(chatId, turn)).driving;
      await driving;
      const end = await ended();
      if (end !== null) return { runId, state: end.stopRequest ? 'stopped' : 'ended' };
    }
    return { runId, state: 'requested' };
  }

  /** Drive a turn nothing drives here, so that it sees the stop asked of it (a turn that ended needs none). */
  async #driveToStop(chatId: string, turn: number): Promise<LiveTurn> {
    const runId = chatRunId(chatId, turn);
    const plan: Planner = async (records) => {
      if (records.length === 0 || readRunLog(records).state === 'ended') return null;
      return { mode: 'resume', request: await this.#turnRequest(chatId, turn, records), inputs: [] };
    };
    return (await this.#open(runId, plan)).live;
  }

  /** A new turn, or a repeated POST of one: the whole turn, from its log, then live. */
  async #turn(post: TurnPost, opts: ChatCallOptions): Promise<Stream> {
    const runId = chatRunId(post.chatId, post.turn);
    const { live } = await this.#open(runId, (records) =>
      records.length > 0 ? this.#carryOn(post.chatId, post.turn, records, []) : this.#newTurn(post),
    );
    return live.follow(assistantMessageId(runId), { from: 'start' }, opts.signal);
  }

  /**
   * The turn's assistant message came back with answers: carry out those its open requests await
   * (a step with several calls may await several; the message may answer some of them); stream
   * what follows.
   */
  async #continue(post: ContinuePost, opts: ChatCallOptions): Promise<Stream> {
    const runId = chatRunId(post.chatId, post.turn);
    const live = await this.#openWithReply(post.chatId, post.turn, (records) => {
      const open = readRunLog(records).openRequests;
      if (open.length === 0) return [];
      const replied = new Set<string>();
      const chunks = new TurnChunks(
        runId,
        () => undefined,
        (id) => replied.add(id),
      );
      for (const rec of records) chunks.record(rec);
      const inputs = open.flatMap((request) => {
        const toolCallId = chunks.toolOfRequest(request.resultId)?.toolCallId ?? null;
        return replyOfParts(post.parts, runId, request, toolCallId) ?? [];
      });
      // The same answers sent again (a retry) stream what followed them, though the turn now waits on another request.
      const answered = answeredIds(post.parts, runId, (toolCallId) => chunks.requestOfTool(toolCallId));
      if (inputs.length === 0 && answered.some((id) => replied.has(id))) return [];
      if (inputs.length === 0) {
        const what = open.map((r) => `the ${innermostRequest(r).kind} ${r.resultId}`).join(' and ');
        throw new InvalidInputError(runId, `the turn awaits ${what}; the message answers nothing of it`);
      }
      return inputs;
    });
    const answered = answeredIds(post.parts, runId, (toolCallId) => live.chunks.requestOfTool(toolCallId));
    const at = live.transcript.afterReplies(answered) ?? live.driverFrom;
    return live.follow(assistantMessageId(runId), { from: 'index', index: at }, opts.signal);
  }

  /**
   * `{ id, runId, input }`: a reply to the open request of the chat's latest turn, which `runId`
   * must name — a reply kept from an earlier turn would otherwise answer a request of the same id.
   */
  async #input(post: InputPost, opts: ChatCallOptions): Promise<Stream> {
    const turn = await this.#latestTurn(post.chatId);
    if (turn === 0) throw refuse(`${chatName(post.chatId)} has no turn to answer`);
    const runId = chatRunId(post.chatId, turn);
    if (post.runId !== runId) {
      throw new InvalidInputError(post.runId, `not the latest turn of ${chatName(post.chatId)} (that is ${runId})`);
    }
    const awaits = (records: readonly LogRecord[]): boolean => readRunLog(records).openRequests.length > 0;
    const live = await this.#openWithReply(post.chatId, turn, (records) => (awaits(records) ? [post.input] : []));
    const at = live.transcript.afterReplies([post.input.resultId]);
    // A driver that carries out another reply, or none, would drop this one: refused, not streamed as if taken.
    if (at === null && !live.given.some((r) => r.resultId === post.input.resultId)) {
      throw new InvalidInputError(runId, `the turn awaits no input ${post.input.resultId}`);
    }
    return live.follow(assistantMessageId(runId), { from: 'index', index: at ?? live.driverFrom }, opts.signal);
  }

  /**
   * Open a turn to carry out the replies that `replyOf` reads from its log (none: the turn awaits
   * none; the replies may be ones carried out already). A turn another stream opened without a
   * driver (a reconnect that found it waiting) is opened again, with the replies.
   */
  async #openWithReply(chatId: string, turn: number, replyOf: ReplyOf): Promise<LiveTurn> {
    const runId = chatRunId(chatId, turn);
    const plan: Planner = async (records) => {
      if (records.length === 0) throw refuse(`turn ${turn} of ${chatName(chatId)} has not started`);
      const inputs = replyOf(records);
      for (const input of inputs) checkFits(runId, records, input);
      const carried = await this.#carryOn(chatId, turn, records, inputs);
      // Edited arguments the tool refuses: refused here, before a driver starts and writes anything.
      const view = readRunLog(records);
      // Checked once the tools' validator has loaded (it loads on demand: decision 0081), as a run would.
      if (carried && carried.inputs.length > 0) await carried.request.tools.loaded();
      for (const input of carried?.inputs ?? []) checkEdit(runId, input, view, carried?.request as RunRequest);
      return carried;
    };
    const opened = await this.#open(runId, plan);
    if (opened.mine || opened.live.driving !== null) return opened.live;
    return (await this.#open(runId, plan)).live;
  }

  /**
   * The turn of `runId` as this process has it: the one still open (`mine: false`), or one made
   * from its log, with a driver when `plan` gives one (`mine: true`). A turn whose transcript
   * closed is done with: its log is complete, so it is read again.
   */
  async #open(runId: string, plan: Planner): Promise<{ live: LiveTurn; mine: boolean }> {
    const found = this.#live.get(runId);
    if (found && !found.transcript.closed) {
      await found.ready;
      return { live: found, mine: false };
    }
    const live = new LiveTurn(runId);
    this.#live.set(runId, live);
    const forget = (): void => void (this.#live.get(runId) === live && this.#live.delete(runId));
    live.ready = (async () => {
      try {
        const records = await this.#store.readLog(runId);
        live.replay(records);
        const p = await plan(records);
        if (p === null) {
          live.endFromLog(records);
          forget();
          return;
        }
        // Started whether or not the host wants to be told (an optional call would skip its argument).
        const driving = this.#drive(live, p).finally(forget);
        this.#waitUntil?.(driving);
      } catch (e) {
        forget();
        throw e;
      }
    })();
    await live.ready;
    return { live, mine: true };
  }

  /**
   * Start the turn's driver; settles (never rejects) when it ended or paused. Several replies are
   * carried out one resume each, in order, while the run still awaits input after each.
   */
  #drive(live: LiveTurn, plan: NonNullable<Plan>): Promise<void> {
    const base = this.#agent;
    return live.drive(async (model, events) => {
      // The event sink is not part of a run's identity, and the model keeps its params: the same run as with `agent`.
      const agent = defineAgent({
        model: model(base.model),
        interpreter: base.interpreter,
        store: this.#store,
        events: events(base.events),
        syntheticObservations: base.syntheticObservations,
      });
      if (plan.mode === 'run') return run(agent, plan.request);
      const [first, ...rest] = plan.inputs;
      let result = await resume(agent, plan.request, first === undefined ? {} : { input: first });
      for (const input of rest) {
        if (result.stopReason !== 'awaiting_input') break;
        result = await resume(agent, plan.request, { input });
      }
      return result;
    }, plan.inputs);
  }

  /** A turn with a log: resume it when it is in flight, or when it awaits input and `inputs` answer it. */
  async #carryOn(
    chatId: string,
    turn: number,
    records: readonly LogRecord[],
    inputs: readonly InputReply[],
  ): Promise<Plan> {
    const view = readRunLog(records);
    if (view.state === 'ended' || (view.state === 'awaiting_input' && inputs.length === 0)) return null;
    const request = await this.#turnRequest(chatId, turn, records);
    return { mode: 'resume', request, inputs: view.state === 'awaiting_input' ? inputs : [] };
  }

  /** A turn never run: its history from the previous turn's log (a turn waiting for a person is cancelled first). */
  async #newTurn(post: TurnPost): Promise<Plan> {
    const { chatId, turn } = post;
    const context = turn === 1 ? [] : await this.#previousContext(chatId, turn - 1);
    const runId = chatRunId(chatId, turn);
    const request = await this.#buildRequest({ chatId, turn, runId, goal: [post.goal], context });
    this.#latest.set(chatId, Math.max(turn, this.#latest.get(chatId) ?? 0));
    return { mode: 'run', request, inputs: [] };
  }

  /** The history turn `turn` ended with, once it has ended; a turn waiting for input is cancelled (in its log). */
  async #previousContext(chatId: string, turn: number): Promise<Message[]> {
    const runId = chatRunId(chatId, turn);
    if (this.#live.get(runId)?.transcript.closed === false) {
      throw new RunLockedError(runId, 'the previous turn of this chat is still running');
    }
    const records = await this.#store.readLog(runId);
    if (records.length === 0) throw refuse(`${chatName(chatId)} has no turn ${turn}: these messages are not its own`);
    const pending = readRunLog(records).pending;
    if (pending !== null) {
      const cancel: InputReply = { kind: 'cancel', resultId: pending.resultId };
      const plan: Planner = async (recs) => this.#carryOn(chatId, turn, recs, readRunLog(recs).pending ? [cancel] : []);
      const { live } = await this.#open(runId, plan);
      await live.driving;
      if (readRunLog(await this.#store.readLog(runId)).ended === null) {
        throw new RunLockedError(runId, 'the previous turn waits for input and could not be cancelled');
      }
    } else if (readRunLog(records).state !== 'ended') {
      throw new RunLockedError(runId, 'the previous turn of this chat has not ended; reconnect to it first');
    }
    return conversationOf(records);
  }

  /** The request of a turn that has a log: rebuilt from its user message and the previous turn's history. */
  async #turnRequest(chatId: string, turn: number, records: readonly LogRecord[]): Promise<RunRequest> {
    const user = userMessageOf(records);
    if (user === null) throw refuse(`turn ${turn} of ${chatName(chatId)} has no user message in its log`);
    const context = turn === 1 ? [] : conversationOf(await this.#store.readLog(chatRunId(chatId, turn - 1)));
    return this.#buildRequest({ chatId, turn, runId: chatRunId(chatId, turn), goal: [user], context });
  }

  async #buildRequest(turn: ChatTurn): Promise<RunRequest> {
    const request = await this.#request(Object.freeze(turn));
    if (typeof request !== 'object' || request === null || request.runId !== turn.runId) {
      throw refuse(`request() must return a request whose runId is the turn's (${JSON.stringify(turn.runId)})`);
    }
    return request;
  }

  /** The chat's latest turn (0: none). Turns are numbered without gaps: a doubling search, then a halving one. */
  async #latestTurn(chatId: string): Promise<number> {
    let lo = this.#latest.get(chatId) ?? 0;
    // A turn remembered here may never have got a log (its start failed): search from nothing then.
    if (lo > 0 && !(await this.#exists(chatId, lo))) lo = 0;
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
