/**
 * A fake OpenAI Chat Completions server (hono on 127.0.0.1), built from the published API
 * reference: the request schema (checked on every request, with the API's own semantic rules),
 * `chat.completion` bodies with `usage`, `chat.completion.chunk` SSE streams ending in `[DONE]` (with
 * the final usage chunk when `stream_options.include_usage` asks for it), and
 * `{ error: { message, type, param, code } }` error bodies with an `x-request-id` header.
 */
import { Validator } from '@cfworker/json-schema';
import { Hono } from 'hono';

export type OpenAIToolCallScript = { readonly id: string; readonly name: string; readonly arguments: string };

/** Token counts a scripted reply reports (`usage`, `prompt_tokens_details`, `completion_tokens_details`). */
export type OpenAIUsageScript = {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cachedTokens?: number;
  readonly reasoningTokens?: number;
};

export type OpenAITurn =
  | {
      readonly kind: 'reply';
      readonly text?: string | null;
      readonly toolCalls?: readonly OpenAIToolCallScript[];
      readonly reasoning?: string;
      readonly refusal?: string;
      readonly finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call' | (string & {});
      /** The usage this reply reports; `null`: none at all (as some local servers). Default 10 prompt + 5 completion tokens. */
      readonly usage?: OpenAIUsageScript | null;
      /** More choices after index 0 (as with `n > 1`): their texts. */
      readonly extraChoices?: readonly string[];
      readonly id?: string;
    }
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly type: string;
      readonly message: string;
      readonly code?: string | null;
    }
  | { readonly kind: 'raw'; readonly status: number; readonly body: string; readonly contentType?: string }
  | { readonly kind: 'stream_error'; readonly text: string; readonly message: string; readonly type: string }
  | { readonly kind: 'hang' }
  /** Stream the first chunks of `text`, then stall forever (for aborts mid-stream). */
  | { readonly kind: 'stream_stall'; readonly text: string }
  /** Stream the first chunks of `text`, then close without a finish_reason or `[DONE]`. */
  | { readonly kind: 'stream_cut'; readonly text: string };

export type Recorded = { readonly headers: Readonly<Record<string, string>>; readonly body: Record<string, unknown> };

const TEXT_PART = {
  type: 'object',
  required: ['type', 'text'],
  properties: { type: { const: 'text' }, text: { type: 'string' } },
};
const CONTENT = { anyOf: [{ type: 'string' }, { type: 'array', items: TEXT_PART }] };
const TOOL_CALL = {
  type: 'object',
  required: ['id', 'type', 'function'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1 },
    type: { const: 'function' },
    function: {
      type: 'object',
      required: ['name', 'arguments'],
      additionalProperties: false,
      properties: { name: { type: 'string' }, arguments: { type: 'string' } },
    },
  },
};
const MESSAGE = {
  oneOf: [
    {
      type: 'object',
      required: ['role', 'content'],
      additionalProperties: false,
      properties: { role: { enum: ['system', 'developer'] }, content: CONTENT, name: { type: 'string' } },
    },
    {
      type: 'object',
      required: ['role', 'content'],
      additionalProperties: false,
      properties: { role: { const: 'user' }, content: CONTENT, name: { type: 'string' } },
    },
    {
      type: 'object',
      required: ['role'],
      additionalProperties: false,
      properties: {
        role: { const: 'assistant' },
        content: { anyOf: [{ type: 'null' }, CONTENT] },
        refusal: { type: ['string', 'null'] },
        name: { type: 'string' },
        tool_calls: { type: 'array', minItems: 1, items: TOOL_CALL },
      },
    },
    {
      type: 'object',
      required: ['role', 'content', 'tool_call_id'],
      additionalProperties: false,
      properties: { role: { const: 'tool' }, content: CONTENT, tool_call_id: { type: 'string' } },
    },
  ],
};

/** The documented request body (the fields this fake knows; real OpenAI rejects unknown ones too). */
export const OPENAI_REQUEST_SCHEMA = {
  type: 'object',
  required: ['model', 'messages'],
  additionalProperties: false,
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: { type: 'array', minItems: 1, items: MESSAGE },
    tools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'function'],
        additionalProperties: false,
        properties: {
          type: { const: 'function' },
          function: {
            type: 'object',
            required: ['name'],
            additionalProperties: false,
            properties: {
              name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
              description: { type: 'string' },
              parameters: { type: 'object' },
              strict: { type: ['boolean', 'null'] },
            },
          },
        },
      },
    },
    tool_choice: {},
    parallel_tool_calls: { type: 'boolean' },
    metadata: {
      type: 'object',
      maxProperties: 16,
      propertyNames: { maxLength: 64 },
      additionalProperties: { type: 'string', maxLength: 512 },
    },
    store: { type: ['boolean', 'null'] },
    stream: { type: ['boolean', 'null'] },
    stream_options: { type: 'object' },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number' },
    max_completion_tokens: { type: 'integer' },
    max_tokens: { type: 'integer' },
    seed: { type: 'integer' },
    n: { type: 'integer' },
    user: { type: 'string' },
    stop: {},
    response_format: { type: 'object' },
    reasoning_effort: { type: 'string' },
  },
};

const validator = new Validator(OPENAI_REQUEST_SCHEMA as object, '2020-12', false);

/** Semantic rules the API enforces beyond the schema. Returns an error message or null. */
export function openAIRequestProblem(body: Record<string, unknown>): string | null {
  const result = validator.validate(body);
  if (!result.valid)
    return `Invalid request: ${result.errors
      .map((e) => `${e.instanceLocation} ${e.error}`)
      .slice(0, 4)
      .join('; ')}`;
  if ('parallel_tool_calls' in body && !('tools' in body))
    return "Invalid value for 'parallel_tool_calls': only allowed when 'tools' are specified.";
  if ('stream_options' in body && body['stream'] !== true)
    return "The 'stream_options' parameter is only allowed when 'stream' is enabled.";
  if ('metadata' in body && body['store'] !== true)
    return "The 'metadata' parameter is only allowed when 'store' is enabled.";
  const messages = body['messages'] as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool' && !isAnsweringTool(messages, i))
      return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
    if (m.role !== 'assistant' || !m.tool_calls) continue;
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j++)
      answered.add(messages[j]!.tool_call_id!);
    const missing = m.tool_calls.map((c) => c.id).filter((id) => !answered.has(id));
    if (missing.length > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`;
    }
  }
  return null;
}

function isAnsweringTool(
  messages: readonly { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[],
  i: number,
): boolean {
  let j = i - 1;
  while (j >= 0 && messages[j]!.role === 'tool') j--;
  const owner = messages[j];
  return (
    owner !== undefined &&
    owner.role === 'assistant' &&
    (owner.tool_calls ?? []).some((c) => c.id === messages[i]!.tool_call_id)
  );
}

function errorResponse(
  status: number,
  type: string,
  message: string,
  requestId: string,
  code: string | null = null,
): Response {
  return new Response(JSON.stringify({ error: { message, type, param: null, code } }), {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
  });
}

const CREATED = 1_764_547_200;

/** A `CompletionUsage` object as the API sends it. */
export function usageBody(u: OpenAIUsageScript = { promptTokens: 10, completionTokens: 5 }): Record<string, unknown> {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: u.reasoningTokens ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

const usageOf = (turn: Extract<OpenAITurn, { kind: 'reply' }>): Record<string, unknown> | null =>
  turn.usage === null ? null : usageBody(turn.usage);

function completion(turn: Extract<OpenAITurn, { kind: 'reply' }>, model: string, id: string): unknown {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: turn.text ?? null,
    refusal: turn.refusal ?? null,
    annotations: [],
  };
  if (turn.toolCalls && turn.toolCalls.length > 0) {
    message['tool_calls'] = turn.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  if (turn.reasoning !== undefined) message['reasoning_content'] = turn.reasoning;
  const finish = turn.finishReason ?? (turn.toolCalls?.length ? 'tool_calls' : 'stop');
  const choices = [{ index: 0, message, logprobs: null, finish_reason: finish }];
  (turn.extraChoices ?? []).forEach((text, k) =>
    choices.push({
      index: k + 1,
      message: { role: 'assistant', content: text, refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: 'stop',
    }),
  );
  const usage = usageOf(turn);
  return {
    id,
    object: 'chat.completion',
    created: CREATED,
    model,
    choices,
    ...(usage ? { usage } : {}),
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

/** Split a string into pieces of at most `n` characters (how servers cut deltas). */
export function pieces(s: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

/**
 * The chunks of a streamed reply. With `includeUsage` every chunk carries `usage: null` and one
 * more chunk, with empty `choices`, carries the usage (as the API does for `include_usage`).
 */
function streamChunks(
  turn: Extract<OpenAITurn, { kind: 'reply' }>,
  model: string,
  id: string,
  includeUsage = false,
): unknown[] {
  const head = {
    id,
    object: 'chat.completion.chunk',
    created: CREATED,
    model,
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): unknown => ({
    ...head,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const out: unknown[] = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const p of pieces(turn.reasoning ?? '', 4)) out.push(chunk({ reasoning_content: p }));
  for (const p of pieces(turn.text ?? '', 3)) out.push(chunk({ content: p }));
  (turn.toolCalls ?? []).forEach((c, index) => {
    out.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }));
    for (const p of pieces(c.arguments, 5)) out.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
  });
  out.push(chunk({}, turn.finishReason ?? (turn.toolCalls?.length ? 'tool_calls' : 'stop')));
  const usage = usageOf(turn);
  if (includeUsage && usage) out.push({ ...head, choices: [], usage });
  return out;
}

function sse(lines: readonly string[], requestId: string, stall = false): Response {
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const l of lines) controller.enqueue(enc.encode(l));
      if (!stall) controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream', 'x-request-id': requestId } });
}

/** The fake as a hono app (Web APIs only: runs in Node and in workerd), with what it received. */
export type OpenAIFakeApp = {
  readonly app: Hono;
  readonly requests: Recorded[];
  readonly turns: OpenAITurn[];
  /** Every `usage` object the fake sent, in order (a body's, or a stream's usage chunk). */
  readonly reportedUsage: Record<string, unknown>[];
};

/** The fake served on a loopback port. */
export type OpenAIFake = OpenAIFakeApp & { readonly baseURL: string; close(): Promise<void> };

/**
 * Build the fake; `turns` is consumed one per request, in order. `deterministic`: a request body
 * seen before gets the turn it got then, like a deterministic model (a re-issued call after a
 * crash gets the same reply and consumes nothing).
 */
export function createOpenAIFake(
  turns: OpenAITurn[] = [],
  opts: { readonly deterministic?: boolean } = {},
): OpenAIFakeApp {
  const requests: Recorded[] = [];
  const reportedUsage: Record<string, unknown>[] = [];
  const seen = new Map<string, OpenAITurn>();
  let n = 0;
  const app = new Hono();
  app.post('/v1/chat/completions', async (c) => {
    const requestId = `req_${++n}`;
    let body: Record<string, unknown>;
    try {
      body = (await c.req.json()) as Record<string, unknown>;
    } catch {
      return errorResponse(
        400,
        'invalid_request_error',
        'We could not parse the JSON body of your request.',
        requestId,
      );
    }
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((v, k) => (headers[k] = v));
    requests.push({ headers, body });
    const problem = openAIRequestProblem(body);
    if (problem) return errorResponse(400, 'invalid_request_error', problem, requestId);
    const key = JSON.stringify(body);
    const turn = opts.deterministic && seen.has(key) ? seen.get(key) : turns.shift();
    if (opts.deterministic && turn) seen.set(key, turn);
    if (!turn) return errorResponse(500, 'server_error', 'the fake has no scripted turn left', requestId);
    const model = String(body['model']);
    if (turn.kind === 'error') return errorResponse(turn.status, turn.type, turn.message, requestId, turn.code ?? null);
    if (turn.kind === 'raw')
      return new Response(turn.body, {
        status: turn.status,
        headers: { 'content-type': turn.contentType ?? 'application/json', 'x-request-id': requestId },
      });
    if (turn.kind === 'hang') return new Promise<Response>(() => undefined);
    const id = turn.kind === 'reply' && turn.id !== undefined ? turn.id : `chatcmpl-${n}`;
    if (turn.kind === 'stream_error') {
      const first = streamChunks({ kind: 'reply', text: turn.text }, model, id).slice(0, -1);
      return sse(
        [
          ...first.map((ch) => `data: ${JSON.stringify(ch)}\n\n`),
          `data: ${JSON.stringify({ error: { message: turn.message, type: turn.type, param: null, code: null } })}\n\n`,
        ],
        requestId,
      );
    }
    if (turn.kind === 'stream_stall' || turn.kind === 'stream_cut') {
      const lines = streamChunks({ kind: 'reply', text: turn.text }, model, id)
        .slice(0, -1)
        .map((ch) => `data: ${JSON.stringify(ch)}\n\n`);
      return sse(lines, requestId, turn.kind === 'stream_stall');
    }
    const usage = usageOf(turn);
    if (body['stream'] === true) {
      const options = body['stream_options'];
      const includeUsage =
        typeof options === 'object' &&
        options !== null &&
        (options as Record<string, unknown>)['include_usage'] === true;
      if (includeUsage && usage) reportedUsage.push(usage);
      return sse(
        [
          ...streamChunks(turn, model, id, includeUsage).map((ch) => `data: ${JSON.stringify(ch)}\n\n`),
          'data: [DONE]\n\n',
        ],
        requestId,
      );
    }
    if (usage) reportedUsage.push(usage);
    return new Response(JSON.stringify(completion(turn, model, id)), {
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    });
  });
  return { app, requests, turns, reportedUsage };
}
