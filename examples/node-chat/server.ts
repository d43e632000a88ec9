/**
 * A chat server on Node: `chatHandler` (polyloop/chat) mounted in a hono app at `/api/chat`, the
 * turns in a `FileStore`, the chat page (examples/web/chat) served at `/`. The model is the
 * examples' deterministic local one: it streams word by word, looks up the weather, asks you,
 * and emails (after your approval) by appending a line to `sent.log` — the side effect you can
 * count: kill the server at any moment, start it again, and no email goes twice.
 *
 *   npm run example:chat          # prints the page's URL (with its bearer token)
 *
 * Environment: PORT (8790), CHAT_DIR (.polyloop-chat: runs/, sent.log, page/), CHAT_TOKEN
 * (default: a random one), CHAT_DELAY_MS (80, between two streamed words), CHAT_PAGE_DIR (a page
 * bundled already; default: bundle it at start), CHAT_HOLD_DIR (a turn waits at a hold point
 * while a file of that name — `text`, `send` — exists there; for tests and demos).
 */
import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { chatHandler, loadChat } from '../../src/chat/index.ts';
import { isPolyLoopError, silentSink } from '../../src/core/index.ts';
import { FileStore } from '../../src/platform-node/index.ts';
import { chatAgent } from '../web/chat/agent.ts';
import type { HoldPoint } from '../web/chat/agent.ts';
import { buildChatPage } from '../web/chat/build.ts';

const env = process.env;
const port = Number(env['PORT'] ?? 8790);
const dir = resolve(env['CHAT_DIR'] ?? '.polyloop-chat');
const token = env['CHAT_TOKEN'] ?? randomBytes(12).toString('hex');
const delayMs = Number(env['CHAT_DELAY_MS'] ?? 80);
const holdDir = env['CHAT_HOLD_DIR'];
const sentLog = join(dir, 'sent.log');
mkdirSync(dir, { recursive: true });

const store = new FileStore({ dir: join(dir, 'runs') });
const { agent, request } = chatAgent(store, silentSink(), {
  delayMs,
  // One line per email, written before the tool returns: what a crash cannot take back.
  sendEmail: (email) => appendFileSync(sentLog, `${JSON.stringify({ at: new Date().toISOString(), ...email })}\n`),
  held: (point: HoldPoint) => holdDir !== undefined && existsSync(join(holdDir, point)),
});
const handle = chatHandler({ agent, store, request });
const pageDir = env['CHAT_PAGE_DIR'] ?? (await buildChatPage(join(dir, 'page')));

const app = new Hono();
app.use('/api/*', async (c, next) => {
  if (c.req.header('authorization') !== `Bearer ${token}`) {
    return c.json({ error: { code: 'unauthorized', message: 'send Authorization: Bearer <token>' } }, 401);
  }
  await next();
});
app.post('/api/chat', (c) => handle(c.req.raw));
app.get('/api/chat/:chatId/stream', (c) => handle(c.req.raw));
// The conversation for a page that loads: every turn rebuilt from its log.
app.get('/api/chat/:chatId/messages', async (c) => {
  try {
    return c.json(await loadChat(store, c.req.param('chatId')));
  } catch (e) {
    if (isPolyLoopError(e, 'invalid_request')) {
      return c.json({ error: { code: 'bad_request', message: e.message } }, 400);
    }
    throw e;
  }
});
const page = (file: string, type: string) => async (): Promise<Response> =>
  new Response(await readFile(join(pageDir, file)), { headers: { 'content-type': type, 'cache-control': 'no-store' } });
app.get('/', page('index.html', 'text/html; charset=utf-8'));
app.get('/chat.js', page('chat.js', 'text/javascript; charset=utf-8'));

const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => {
  console.log(`chat: listening on http://127.0.0.1:${info.port}/?api=/api/chat&token=${token}`);
  console.log(`chat: runs in ${join(dir, 'runs')}, emails in ${sentLog}`);
});
const stop = (): void => {
  server.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
