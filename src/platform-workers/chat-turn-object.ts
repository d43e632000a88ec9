/**
 * The chat turn Durable Object: each turn of a chat is a run, and each such run its own object —
 * its log, its driver (the chat engine of `polyloop/chat`, run inside the object), its alarm,
 * its UI message stream. Earlier turns, whose logs hold this turn's history, are read through
 * their own objects. Why it is built this way: docs/decisions/0057-chat-on-workers.md.
 * @module
 */
import { DurableObject } from 'cloudflare:workers';
import { isPolyLoopError, readRunLog } from '../core/index.ts';
import { checkOptionKeys } from '../core/internal-entry.ts';
import type { AgentDefinition, RunLogState, RunRequest } from '../core/index.ts';
import type { OptionKeys } from '../core/internal-entry.ts';
import { chatHandler } from '../chat/index.ts';
import type { ChatTurn } from '../chat/index.ts';
import { DurableObjectStore } from './durable-object-store.ts';
import { TurnStore, turnIdOf } from './chat-turn-store.ts';
import type { TurnId } from './chat-turn-store.ts';
import {
  createTurnTable,
  hasTable,
  LOG_TABLE,
  markTurnHalted,
  readTurnRow,
  rememberTurn,
  settleFailures,
  TURN_TABLE,
} from './chat-turn-row.ts';

/** The header that names the turn (its run id) on every request the app sends a turn object. */
export const CHAT_TURN_HEADER = 'polyloop-chat-turn';

/** What a chat's turns run with: the agent, and what builds a turn's request (as `chatHandler` takes them). */
export type ChatTurnSetup = {
  readonly agent: AgentDefinition;
  /** As `request` of `chatHandler`: the same request for the same turn every time (a resume calls it again). */
  readonly request: (turn: ChatTurn) => RunRequest | Promise<RunRequest>;
};

/** Options of {@link createChatTurnObject}. */
export type ChatTurnObjectOptions<Env> = {
  /** The namespace this very class is bound to: a turn reads the chat's earlier turns through their objects. */
  readonly turns: (env: Env) => DurableObjectNamespace<ChatTurnObjectBase<Env>>;
  /** The chat's agent and turn request, for the Worker's env (called once per object instance). */
  readonly setup: (ctx: { readonly env: Env }) => ChatTurnSetup;
  /**
   * Alarm period (default 30 s): while a turn is in flight the alarm fires this often, and
   * resumes it when no driver runs.
   */
  readonly resumeAfterMs?: number;
  /**
   * Stop the alarm after this many drives in a row end with the turn still in flight and no
   * record written (default 10).
   */
  readonly maxFailedDrives?: number;
};

const OPTIONS: OptionKeys<ChatTurnObjectOptions<unknown>> = {
  turns: true,
  setup: true,
  resumeAfterMs: true,
  maxFailedDrives: true,
};

/**
 * The turn object's methods as other turn objects and the app call them (spelled out: the
 * inferred RPC types are too deep for tsc).
 */
export type ChatTurnRpc = {
  hasTurn(runId: string): Promise<boolean>;
  turnLog(runId: string): Promise<readonly string[]>;
  prepareNextTurn(runId: string): Promise<boolean>;
  fetch(request: Request): Promise<Response>;
};

/** The turn object of `runId` in `ns`. */
export function chatTurnStub<T extends Rpc.DurableObjectBranded | undefined>(
  ns: DurableObjectNamespace<T>,
  runId: string,
): ChatTurnRpc {
  return ns.get(ns.idFromName(runId)) as unknown as ChatTurnRpc;
}

type Handler = (req: Request) => Promise<Response>;

function problem(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}

/** True for a POST body whose last message is a user message: a new turn, or a repeated POST of one. */
function isTurnPost(text: string): boolean {
  try {
    const body = JSON.parse(text) as { messages?: unknown };
    const last = Array.isArray(body.messages) ? (body.messages.at(-1) as { role?: unknown } | undefined) : undefined;
    return last?.role === 'user';
  } catch {
    return false; // the chat handler answers it
  }
}

/**
 * The chat turn Durable Object. Do not instantiate or subclass it directly: export the class
 * returned by {@link createChatTurnObject} under the `class_name` of your `wrangler.toml`
 * binding. `createApp`'s `chat` option routes `/chat` to it.
 */
export class ChatTurnObjectBase<Env = unknown> extends DurableObject<Env> {
  readonly #options: ChatTurnObjectOptions<Env>;
  #storeRef: DurableObjectStore | null = null;
  #bound: { readonly id: TurnId; readonly handle: Handler } | null = null;
  /** Drivers of the turn running in this instance (the engine starts at most one at a time). */
  #drivers = 0;

  constructor(ctx: DurableObjectState, env: Env, options: ChatTurnObjectOptions<Env>) {
    super(ctx, env);
    this.#options = options;
    // No table is created here: an object asked whether a turn exists must not be left with storage.
  }

  /** True when this object holds the turn `runId` (its log has a record, or its driver is starting it). */
  async hasTurn(runId: string): Promise<boolean> {
    if (this.#drivers > 0 && this.#bound?.id.runId === runId) return true;
    return this.#log(false)?.hasLog(runId) ?? false;
  }

  /** The lines of the turn's log, `[]` when it has none. Read-only: what a later turn reads its history from. */
  async turnLog(runId: string): Promise<readonly string[]> {
    return (
      this.#log(false)
        ?.readLines(runId)
        .map((l) => l.line) ?? []
    );
  }

  /**
   * Make way for the next turn: a turn waiting for input is cancelled (its log says by whom,
   * as a person's cancel), and this resolves once that is carried out. False when this object
   * holds no such turn (the next one cannot start: its history is missing).
   */
  async prepareNextTurn(runId: string): Promise<boolean> {
    const id = turnIdOf(runId);
    const store = this.#log(false);
    if (id === null || store === null || !store.hasLog(runId)) return false;
    const pending = readRunLog(store.readLogSync(runId)).pending;
    if (pending === null) return true;
    const body = JSON.stringify({ id: id.chatId, runId, input: { kind: 'cancel', resultId: pending.resultId } });
    const headers = { 'content-type': 'application/json' };
    const res = await this.#handler(id)(new Request('https://chat-turn/chat', { method: 'POST', body, headers }));
    // The stream ends once the cancelled turn has ended; an error answer (it was answered
    // meanwhile) leaves the next turn's engine to decide from the log.
    await res.body?.pipeTo(new WritableStream());
    return true;
  }

  /**
   * The turn's HTTP face, for the app only: `POST` a chat body (`useChat`'s, or `{ id, runId, input }`)
   * and get the turn's UI message stream; `GET …/:chatId/stream` to reconnect (`204` when it is
   * not running). The turn is named by the `polyloop-chat-turn` header.
   */
  override async fetch(request: Request): Promise<Response> {
    const id = turnIdOf(request.headers.get(CHAT_TURN_HEADER) ?? '');
    if (id === null) return problem(400, 'bad_request', 'not a chat turn');
    if (this.#bound !== null && this.#bound.id.runId !== id.runId) {
      return problem(500, 'internal', 'this object holds another turn');
    }
    if (request.method !== 'POST') return this.#handler(id)(request);
    const text = await request.text();
    if (id.turn > 1 && isTurnPost(text) && !(this.#log(false)?.hasLog(id.runId) ?? false)) {
      const previous = `chat:${id.chatId}:${id.turn - 1}`;
      const found = await chatTurnStub(this.#options.turns(this.env), previous).prepareNextTurn(previous);
      const chat = JSON.stringify(id.chatId);
      const missing = `chat ${chat} has no turn ${id.turn - 1}; its messages do not match the server's`;
      if (!found) return problem(400, 'bad_request', missing);
    }
    const { headers, signal } = request;
    return this.#handler(id)(new Request(request.url, { method: 'POST', headers, body: text, signal }));
  }

  /**
   * Heartbeat and recovery: while the turn is in flight the alarm re-arms itself, and resumes
   * the turn when no driver runs here (the instance was evicted, crashed or redeployed). A turn
   * that ended, waits for a person, or never started is left alone, its alarm not re-armed.
   */
  override async alarm(): Promise<void> {
    const row = hasTable(this.ctx.storage.sql, TURN_TABLE) ? readTurnRow(this.ctx.storage.sql) : null;
    const id = row === null || row.halted !== null ? null : turnIdOf(row.runId);
    if (id === null) return;
    const state = this.#stateOf(id.runId);
    if (state !== 'in_flight' && state !== 'at_boundary') return;
    await this.ctx.storage.setAlarm(Date.now() + this.#resumeAfterMs());
    if (this.#drivers > 0) return;
    // The reconnect resumes the turn; nobody reads this stream, the driver goes on without it.
    const res = await this.#handler(id)(new Request(`https://chat-turn/chat/${id.chatId}/stream`));
    await res.body?.cancel();
  }

  /** The object's log store; with `create: false`, null while it has no log table. */
  #log(create: boolean): DurableObjectStore | null {
    if (this.#storeRef === null && (create || hasTable(this.ctx.storage.sql, LOG_TABLE))) {
      this.#storeRef = new DurableObjectStore(this.ctx.storage);
    }
    return this.#storeRef;
  }

  /** The chat handler of this object's turn, made on first use (one engine per instance: one driver per turn). */
  #handler(id: TurnId): Handler {
    if (this.#bound !== null) return this.#bound.handle;
    const { agent, request } = this.#options.setup({ env: this.env });
    const turns = this.#options.turns(this.env);
    const store = new TurnStore({
      chatId: id.chatId,
      own: { ...id, log: (create) => this.#log(create) },
      earlier: (runId) => chatTurnStub(turns, runId).turnLog(runId),
    });
    const handle = chatHandler({ agent, store, request, waitUntil: (p) => this.#track(id, p) });
    this.#bound = { id, handle };
    return handle;
  }

  /**
   * A driver started (the engine tells of each one): the alarm is armed before the run's first
   * write (the library reads the log first), so an eviction from here on is resumed.
   */
  #track(id: TurnId, driving: Promise<unknown>): void {
    this.#drivers++;
    createTurnTable(this.ctx.storage.sql);
    rememberTurn(this.ctx.storage.sql, id.runId);
    const armed = this.ctx.storage.setAlarm(Date.now() + this.#resumeAfterMs());
    const done = Promise.all([armed, driving]).finally(async () => {
      this.#drivers--;
      if (this.#drivers === 0) await this.#afterDrive(id);
    });
    this.ctx.waitUntil(done);
  }

  /**
   * A driver settled: no alarm for a turn that ended or waits; a turn still in flight is
   * retried by the alarm, up to a limit.
   */
  async #afterDrive(id: TurnId): Promise<void> {
    const state = this.#stateOf(id.runId);
    const seq = this.#log(false)?.lastSeq(id.runId) ?? -1;
    const inFlight = state === 'in_flight' || state === 'at_boundary';
    const failures = settleFailures(this.ctx.storage.sql, { failed: inFlight, seq });
    if (!inFlight) return this.ctx.storage.deleteAlarm();
    const name = JSON.stringify(id.runId);
    if (failures < (this.#options.maxFailedDrives ?? 10)) {
      const why = `${failures} in a row without progress`;
      console.error(`polyloop: chat turn ${name} stopped in flight (${why}); the alarm retries it`);
      return;
    }
    console.error(`polyloop: chat turn ${name} halted after ${failures} drives in a row without progress`);
    markTurnHalted(this.ctx.storage.sql, `${failures} drives in a row without progress`);
    await this.ctx.storage.deleteAlarm();
  }

  /** The turn's state by its log, or null when the log cannot be read (a corrupt log is not driven by the alarm). */
  #stateOf(runId: string): RunLogState | null {
    try {
      return readRunLog(this.#log(false)?.readLogSync(runId) ?? []).state;
    } catch (e) {
      if (isPolyLoopError(e)) return null;
      throw e;
    }
  }

  #resumeAfterMs(): number {
    return this.#options.resumeAfterMs ?? 30_000;
  }
}

/**
 * Make the chat turn Durable Object class for your chat: one object per turn of every chat,
 * which drives the turn with `polyloop/chat` and resumes it by its alarm after an eviction.
 * Throws `InvalidRequestError` for a key that is not an option and a TypeError for an invalid
 * value. Export it under the `class_name` your `wrangler.toml` binds (a `new_sqlite_classes`
 * migration) and give its binding to `createApp`'s `chat` option and to `turns`.
 *
 * @example
 * export class ChatTurnObject extends createChatTurnObject<Env>({
 *   turns: (env) => env.CHAT,
 *   setup: ({ env }) => ({
 *     agent: chatAgent(env),
 *     request: ({ runId, goal, context }) => ({ ...base, runId, context: { run: [system, ...context], goal } }),
 *   }),
 * }) {}
 */
export function createChatTurnObject<Env = unknown>(
  options: ChatTurnObjectOptions<Env>,
): new (
  ctx: DurableObjectState,
  env: Env,
) => ChatTurnObjectBase<Env> {
  checkOptionKeys(options, OPTIONS, 'createChatTurnObject');
  const { turns, setup, resumeAfterMs, maxFailedDrives } = options;
  const where = 'createChatTurnObject:';
  if (typeof turns !== 'function' || typeof setup !== 'function') {
    throw new TypeError(`${where} turns and setup must be functions`);
  }
  if (resumeAfterMs !== undefined && !(Number.isFinite(resumeAfterMs) && resumeAfterMs > 0)) {
    throw new TypeError(`${where} resumeAfterMs must be a positive number of milliseconds, got ${resumeAfterMs}`);
  }
  if (maxFailedDrives !== undefined && !(Number.isInteger(maxFailedDrives) && maxFailedDrives > 0)) {
    throw new TypeError(`${where} maxFailedDrives must be a positive integer, got ${maxFailedDrives}`);
  }
  return class ChatTurnObject extends ChatTurnObjectBase<Env> {
    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env, options);
    }
  };
}
