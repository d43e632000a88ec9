/**
 * The chat routes of the app: `POST /chat`, `GET /chat/:chatId/stream`, `GET /chat/:chatId/messages`.
 * The Worker reads and checks the body, works out which turn it is about, and hands it to that
 * turn's object, which drives the turn and streams it (decision 0057).
 * @module
 */
import type { Context, Hono } from 'hono';
import { isPolyLoopError } from '../core/index.ts';
import { chatRunId, loadChat } from '../chat/index.ts';
import { parseChatPost } from '../chat/body.ts';
import { readJsonBody } from './body.ts';
import { CHAT_TURN_HEADER, chatTurnStub } from './chat-turn-object.ts';
import type { ChatTurnObjectBase } from './chat-turn-object.ts';
import { TurnStore } from './chat-turn-store.ts';

/** The chat turn objects' namespace, for the Worker's env. */
export type ChatNamespaceOf<Env> = (env: Env) => DurableObjectNamespace<ChatTurnObjectBase<Env>>;

type Fail = (c: Context, status: 400 | 413, code: 'bad_request' | 'payload_too_large', message: string) => Response;

/**
 * The chat's latest turn (0: none), asked of the turn objects: turns are numbered without gaps,
 * so a doubling search then a halving one finds it in about 2·log₂(turns) questions.
 */
export async function latestTurn<T extends Rpc.DurableObjectBranded | undefined>(
  ns: DurableObjectNamespace<T>,
  chatId: string,
): Promise<number> {
  const has = (turn: number): Promise<boolean> => {
    const runId = chatRunId(chatId, turn);
    return chatTurnStub(ns, runId).hasTurn(runId);
  };
  let lo = 0;
  let step = 1;
  while (await has(lo + step)) {
    lo += step;
    step *= 2;
  }
  let hi = lo + step;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await has(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Why `chatId` is no chat id, or null (the chat's own rule: 1–128 of `[A-Za-z0-9_-]`). */
function chatIdProblem(chatId: string): string | null {
  try {
    chatRunId(chatId, 1);
    return null;
  } catch (e) {
    if (isPolyLoopError(e, 'invalid_request')) return e.message;
    throw e;
  }
}

/** A checked `POST /chat` body: its text (handed on as it is) and what it asks for. */
type ChatBody = { readonly text: string; readonly post: ReturnType<typeof parseChatPost> };

/** Size, parse and schema checks of `POST /chat`, in that order: the body, or the error response. */
async function readChatPost(c: Context, fail: Fail): Promise<Response | ChatBody> {
  const body = await readJsonBody(c.req.raw);
  if ('status' in body) return fail(c, body.status, body.code, body.message);
  try {
    return { text: body.text, post: parseChatPost(body.raw) };
  } catch (e) {
    if (isPolyLoopError(e, 'invalid_request')) return fail(c, 400, 'bad_request', e.message);
    throw e;
  }
}

/** Add the chat routes to `app` (after its auth, CORS and body-draining middleware). */
export function chatRoutes<Env extends object>(
  app: Hono<{ Bindings: Env }>,
  turnsOf: ChatNamespaceOf<Env>,
  fail: Fail,
): void {
  const ns = (c: Context<{ Bindings: Env }>): DurableObjectNamespace<ChatTurnObjectBase<Env>> => turnsOf(c.env);

  app.post('/chat', async (c) => {
    const read = await readChatPost(c, fail);
    if (read instanceof Response) return read;
    const { post, text } = read;
    // `{ id, runId, input }` goes to the chat's latest turn, whose engine refuses a runId naming another turn;
    // a message list names its turn by its count of user messages.
    const turn = post.kind === 'input' ? await latestTurn(ns(c), post.chatId) : post.turn;
    if (turn === 0) return fail(c, 400, 'bad_request', `chat ${JSON.stringify(post.chatId)} has no turn to answer`);
    const runId = chatRunId(post.chatId, turn);
    const headers = { 'content-type': 'application/json', [CHAT_TURN_HEADER]: runId };
    const signal = c.req.raw.signal;
    const req = new Request('https://chat-turn/chat', { method: 'POST', headers, body: text, signal });
    return chatTurnStub(ns(c), runId).fetch(req);
  });

  app.get('/chat/:chatId/stream', async (c) => {
    const chatId = c.req.param('chatId');
    const problem = chatIdProblem(chatId);
    if (problem !== null) return fail(c, 400, 'bad_request', problem);
    const turn = await latestTurn(ns(c), chatId);
    if (turn === 0) return c.body(null, 204);
    const runId = chatRunId(chatId, turn);
    const headers = { [CHAT_TURN_HEADER]: runId };
    const req = new Request(`https://chat-turn/chat/${chatId}/stream`, { headers, signal: c.req.raw.signal });
    return chatTurnStub(ns(c), runId).fetch(req);
  });

  app.get('/chat/:chatId/messages', async (c) => {
    const chatId = c.req.param('chatId');
    const problem = chatIdProblem(chatId);
    if (problem !== null) return fail(c, 400, 'bad_request', problem);
    const turns = ns(c);
    const reader = new TurnStore({ chatId, own: null, earlier: (runId) => chatTurnStub(turns, runId).turnLog(runId) });
    return c.json(await loadChat(reader, chatId));
  });
}
