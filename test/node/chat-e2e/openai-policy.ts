/**
 * An OpenAI-compatible Chat Completions server on loopback that answers by a policy instead of a
 * script (the chat of the Worker template calls it through its `OPENAI_BASE_URL` var), streaming
 * every reply in pieces of four characters; `hold()` stops the next replies after their first
 * piece until `release()`. It also takes the template's `notify` webhook (`POST /notify`) and
 * counts each message it got.
 *
 * The policy reads the turn's user message (the last `user` message; `tool` messages after it
 * are this turn's tool results): `add A and B` → "Let me add them." and a call of `add`, then
 * "The sum is <result>."; `notify <message>` → "I will tell the team once you approve." and a
 * call of `notify`, then "Done: the team has it." or "I did not send it (<reason>)."; anything
 * else → "You said: <text>."
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

type Wire = { role: string; content?: unknown };
type Reply = { text: string; call?: { name: string; args: Record<string, unknown> } };

export type PolicyFake = {
  /** `http://127.0.0.1:<port>/v1` (for `OPENAI_BASE_URL`). */
  readonly baseURL: string;
  /** `http://127.0.0.1:<port>/notify` (for `NOTIFY_URL`). */
  readonly notifyURL: string;
  /** How many times the webhook got `message`. */
  notified(message: string): number;
  /** Replies from now on stop after their first piece until {@link release}. */
  hold(): void;
  release(): void;
  close(): Promise<void>;
};

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) =>
      typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string'
        ? (p as { text: string }).text
        : '',
    )
    .join('');
};

/** The policy's reply to a conversation. */
export function policyReply(messages: readonly Wire[]): Reply {
  let at = messages.length - 1;
  while (at >= 0 && messages[at]?.role !== 'user') at--;
  const goal = at < 0 ? '' : textOf(messages[at]?.content).trim();
  const results = messages
    .slice(at + 1)
    .filter((m) => m.role === 'tool')
    .map((m) => textOf(m.content));
  const add = /^add (-?\d+) and (-?\d+)$/.exec(goal);
  if (add !== null) {
    if (results.length === 0)
      return { text: 'Let me add them.', call: { name: 'add', args: { a: Number(add[1]), b: Number(add[2]) } } };
    return { text: `The sum is ${results[0]}.` };
  }
  const notify = /^notify (.+)$/.exec(goal);
  if (notify !== null) {
    if (results.length === 0)
      return { text: 'I will tell the team once you approve.', call: { name: 'notify', args: { message: notify[1] } } };
    return {
      text:
        results[0] === 'The team got the message.' ? 'Done: the team has it.' : `I did not send it (${results[0]}).`,
    };
  }
  return { text: `You said: ${goal}.` };
}

function chunks(reply: Reply, n: number): unknown[] {
  const head = { id: `chatcmpl-${n}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: 'policy' };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): unknown => ({
    ...head,
    choices: [{ index: 0, delta, finish_reason: finish }],
    usage: null,
  });
  const out: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (let i = 0; i < reply.text.length; i += 4) out.push(chunk({ content: reply.text.slice(i, i + 4) }));
  if (reply.call) {
    const fn = { name: reply.call.name, arguments: JSON.stringify(reply.call.args) };
    out.push(chunk({ tool_calls: [{ index: 0, id: `call_${n}`, type: 'function', function: fn }] }));
  }
  out.push(chunk({}, reply.call ? 'tool_calls' : 'stop'));
  out.push({ ...head, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  return out;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const part of req) body += String(part);
  return body;
}

/** Start the fake on a free loopback port. */
export async function startPolicyFake(): Promise<PolicyFake> {
  const notified = new Map<string, number>();
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  let calls = 0;
  const completions = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = JSON.parse(await bodyOf(req)) as { messages: Wire[] };
    const held = gate?.promise ?? null;
    const lines = chunks(policyReply(body.messages), ++calls).map((c) => `data: ${JSON.stringify(c)}\n\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // The role chunk and the first piece of text, then (when held) nothing until released.
    for (const [i, line] of [...lines, 'data: [DONE]\n\n'].entries()) {
      if (i === 2 && held !== null) await held;
      res.write(line);
    }
    res.end();
  };
  const server: Server = createServer((req, res) => {
    const route = req.url ?? '';
    if (req.method === 'POST' && route === '/v1/chat/completions')
      return void completions(req, res).catch(() => res.destroy());
    if (req.method === 'POST' && route === '/notify') {
      return void bodyOf(req).then((message) => {
        notified.set(message, (notified.get(message) ?? 0) + 1);
        res.writeHead(204).end();
      });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    notifyURL: `http://127.0.0.1:${port}/notify`,
    notified: (message) => notified.get(message) ?? 0,
    hold() {
      if (gate !== null) return;
      let open!: () => void;
      const promise = new Promise<void>((ok) => (open = ok));
      gate = { promise, open };
    },
    release() {
      gate?.open();
      gate = null;
    },
    close: () => {
      gate?.open();
      server.closeAllConnections();
      return new Promise((ok) => server.close(() => ok()));
    },
  };
}
