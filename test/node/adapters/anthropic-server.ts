/**
 * A fake Anthropic Messages server (hono on 127.0.0.1), built from the published API reference:
 * the request schema (checked on every request, with the API's tool_use/tool_result pairing rule),
 * `message` bodies with `stop_reason` and `usage`, the SSE event sequence (`message_start`, `content_block_*`, `ping`,
 * `message_delta`, `message_stop`, `error`), and `{ type: 'error', error: { type, message } }`
 * error bodies with a `request-id` header.
 */
import { Validator } from '@cfworker/json-schema';
import { Hono } from 'hono';
import { pieces } from './openai-server.ts';
import type { Recorded } from './openai-server.ts';

export type AnthropicBlockScript =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'thinking'; readonly thinking: string; readonly signature: string }
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly input: Record<string, unknown> }
  | { readonly type: 'redacted_thinking'; readonly data: string };

/** Token counts a scripted reply reports (`usage`; `thinkingTokens` → `output_tokens_details.thinking_tokens`). */
export type AnthropicUsageScript = {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheCreationInputTokens?: number;
  readonly cacheReadInputTokens?: number;
  readonly thinkingTokens?: number;
};

export type AnthropicStopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'refusal'
  | 'pause_turn'
  | 'model_context_window_exceeded';

export type AnthropicTurn =
  | {
      readonly kind: 'reply';
      readonly content: readonly AnthropicBlockScript[];
      readonly stopReason?: AnthropicStopReason | (string & {});
      /** The `stop_sequence` that matched (with `stopReason: 'stop_sequence'`). */
      readonly stopSequence?: string;
      /** Default 12 input + 6 output tokens, no cache. */
      readonly usage?: AnthropicUsageScript;
      readonly id?: string;
    }
  | { readonly kind: 'error'; readonly status: number; readonly type: string; readonly message: string }
  | { readonly kind: 'raw'; readonly status: number; readonly body: string; readonly contentType?: string }
  | { readonly kind: 'stream_error'; readonly text: string; readonly type: string; readonly message: string }
  | { readonly kind: 'hang' }
  /** Stream the start of a text reply, then close without `message_stop`. */
  | { readonly kind: 'stream_cut'; readonly text: string };

const TEXT = {
  type: 'object',
  required: ['type', 'text'],
  properties: { type: { const: 'text' }, text: { type: 'string', minLength: 1 }, cache_control: {} },
};
const BLOCK = {
  oneOf: [
    TEXT,
    {
      type: 'object',
      required: ['type', 'thinking', 'signature'],
      additionalProperties: false,
      properties: { type: { const: 'thinking' }, thinking: { type: 'string' }, signature: { type: 'string' } },
    },
    {
      type: 'object',
      required: ['type', 'data'],
      additionalProperties: false,
      properties: { type: { const: 'redacted_thinking' }, data: { type: 'string' } },
    },
    {
      type: 'object',
      required: ['type', 'id', 'name', 'input'],
      additionalProperties: false,
      properties: {
        type: { const: 'tool_use' },
        id: { type: 'string' },
        name: { type: 'string' },
        input: { type: 'object' },
        cache_control: {},
      },
    },
    {
      type: 'object',
      required: ['type', 'tool_use_id'],
      additionalProperties: false,
      properties: {
        type: { const: 'tool_result' },
        tool_use_id: { type: 'string' },
        content: { anyOf: [{ type: 'string' }, { type: 'array', items: TEXT }] },
        is_error: { type: 'boolean' },
        cache_control: {},
      },
    },
  ],
};

/** The documented request body (the fields this fake knows; the real API rejects unknown ones). */
export const ANTHROPIC_REQUEST_SCHEMA = {
  type: 'object',
  required: ['model', 'max_tokens', 'messages'],
  additionalProperties: false,
  properties: {
    model: { type: 'string', minLength: 1 },
    max_tokens: { type: 'integer', minimum: 1 },
    messages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['role', 'content'],
        additionalProperties: false,
        properties: {
          role: { enum: ['user', 'assistant'] },
          content: { anyOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: BLOCK }] },
        },
      },
    },
    system: { anyOf: [{ type: 'string' }, { type: 'array', items: TEXT }] },
    tools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'input_schema'],
        properties: {
          name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,128}$' },
          description: { type: 'string' },
          input_schema: { type: 'object', required: ['type'], properties: { type: { const: 'object' } } },
        },
      },
    },
    tool_choice: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['auto', 'any', 'tool', 'none'] },
        disable_parallel_tool_use: { type: 'boolean' },
        name: { type: 'string' },
      },
    },
    metadata: {
      type: 'object',
      additionalProperties: false,
      properties: { user_id: { type: ['string', 'null'], maxLength: 256 } },
    },
    stream: { type: 'boolean' },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    top_p: { type: 'number' },
    top_k: { type: 'integer' },
    stop_sequences: { type: 'array', items: { type: 'string' } },
    thinking: { type: 'object' },
    service_tier: { type: 'string' },
  },
};

const validator = new Validator(ANTHROPIC_REQUEST_SCHEMA as object, '2020-12', false);

type WireMessage = { role: string; content: string | { type: string; id?: string; tool_use_id?: string }[] };

/** Semantic rules the API enforces beyond the schema. Returns an error message or null. */
export function anthropicRequestProblem(body: Record<string, unknown>): string | null {
  const result = validator.validate(body);
  if (!result.valid)
    return `Invalid request: ${result.errors
      .map((e) => `${e.instanceLocation} ${e.error}`)
      .slice(0, 4)
      .join('; ')}`;
  const messages = body['messages'] as WireMessage[];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (i > 0 && messages[i - 1]!.role === m.role)
      return `messages: roles must alternate between "user" and "assistant" (messages.${i})`;
    if (typeof m.content === 'string') continue;
    if (m.role === 'assistant') {
      const uses = m.content.filter((b) => b.type === 'tool_use').map((b) => b.id!);
      const next = messages[i + 1];
      const results =
        next && typeof next.content !== 'string'
          ? next.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id!)
          : [];
      const missing = uses.filter((id) => !results.includes(id));
      if (missing.length > 0) {
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    } else {
      const firstOther = m.content.findIndex((b) => b.type !== 'tool_result');
      const lastResult = m.content.map((b) => b.type).lastIndexOf('tool_result');
      if (firstOther !== -1 && lastResult > firstOther)
        return `messages.${i}: tool_result blocks must come first in the user message content`;
      const prev = messages[i - 1];
      const uses =
        prev && typeof prev.content !== 'string'
          ? prev.content.filter((b) => b.type === 'tool_use').map((b) => b.id)
          : [];
      const orphan = m.content.find((b) => b.type === 'tool_result' && !uses.includes(b.tool_use_id));
      if (orphan)
        return `messages.${i}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${orphan.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  return null;
}

function errorResponse(status: number, type: string, message: string, requestId: string): Response {
  return new Response(JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId }), {
    status,
    headers: { 'content-type': 'application/json', 'request-id': requestId },
  });
}

const USAGE = {
  input_tokens: 12,
  output_tokens: 6,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  service_tier: 'standard',
};

/** A `Usage` object as the API sends it. */
export function usageBody(u: AnthropicUsageScript | undefined): Record<string, unknown> {
  if (u === undefined) return USAGE;
  return {
    input_tokens: u.inputTokens,
    output_tokens: u.outputTokens,
    cache_creation_input_tokens: u.cacheCreationInputTokens ?? 0,
    cache_read_input_tokens: u.cacheReadInputTokens ?? 0,
    service_tier: 'standard',
    ...(u.thinkingTokens === undefined ? {} : { output_tokens_details: { thinking_tokens: u.thinkingTokens } }),
  };
}

type MessageBody = {
  readonly [key: string]: unknown;
  readonly stop_reason: string;
  readonly stop_sequence: string | null;
  readonly usage: Record<string, unknown>;
};

function message(turn: Extract<AnthropicTurn, { kind: 'reply' }>, model: string, id: string): MessageBody {
  const stop = turn.stopReason ?? (turn.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const content = turn.content.map((b) => (b.type === 'text' ? { ...b, citations: null } : b));
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stop,
    stop_sequence: turn.stopSequence ?? null,
    usage: usageBody(turn.usage),
  };
}

function ev(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function blockEvents(b: AnthropicBlockScript, index: number): string[] {
  if (b.type === 'text') {
    return [
      ev('content_block_start', { index, content_block: { type: 'text', text: '', citations: null } }),
      ...pieces(b.text, 3).map((text) => ev('content_block_delta', { index, delta: { type: 'text_delta', text } })),
      ev('content_block_stop', { index }),
    ];
  }
  if (b.type === 'redacted_thinking') {
    // Encrypted: the whole block arrives in content_block_start, no deltas.
    return [
      ev('content_block_start', { index, content_block: { type: 'redacted_thinking', data: b.data } }),
      ev('content_block_stop', { index }),
    ];
  }
  if (b.type === 'thinking') {
    return [
      ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ...pieces(b.thinking, 4).map((thinking) =>
        ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } }),
      ),
      ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: b.signature } }),
      ev('content_block_stop', { index }),
    ];
  }
  return [
    ev('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } }),
    ...pieces(JSON.stringify(b.input), 5).map((partial_json) =>
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }),
    ),
    ev('content_block_stop', { index }),
  ];
}

function streamEvents(turn: Extract<AnthropicTurn, { kind: 'reply' }>, model: string, id: string): string[] {
  const full = message(turn, model, id);
  // message_start has the input side and a first output count; message_delta the cumulative output.
  const { output_tokens: output, output_tokens_details: details, ...start } = full.usage;
  const final = { output_tokens: output, ...(details === undefined ? {} : { output_tokens_details: details }) };
  return [
    ev('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...start, output_tokens: 1 },
      },
    }),
    ev('ping', {}),
    ...turn.content.flatMap((b, i) => blockEvents(b, i)),
    ev('message_delta', { delta: { stop_reason: full.stop_reason, stop_sequence: full.stop_sequence }, usage: final }),
    ev('message_stop', {}),
  ];
}

function sse(lines: readonly string[], requestId: string): Response {
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const l of lines) controller.enqueue(enc.encode(l));
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream', 'request-id': requestId } });
}

/** The fake as a hono app (Web APIs only: runs in Node and in workerd), with what it received. */
export type AnthropicFakeApp = {
  readonly app: Hono;
  readonly requests: Recorded[];
  readonly turns: AnthropicTurn[];
  /** The `usage` of every message the fake sent, in order (streamed: what message_start and message_delta add up to). */
  readonly reportedUsage: Record<string, unknown>[];
};

/** The fake served on a loopback port. */
export type AnthropicFake = AnthropicFakeApp & { readonly baseURL: string; close(): Promise<void> };

/** Build the fake; `turns` is consumed one per request, in order (`deterministic`: as the OpenAI fake). */
export function createAnthropicFake(
  turns: AnthropicTurn[] = [],
  opts: { readonly deterministic?: boolean } = {},
): AnthropicFakeApp {
  const requests: Recorded[] = [];
  const reportedUsage: Record<string, unknown>[] = [];
  const seen = new Map<string, AnthropicTurn>();
  let n = 0;
  const app = new Hono();
  app.post('/v1/messages', async (c) => {
    const requestId = `req_ant_${++n}`;
    if (c.req.header('anthropic-version') === undefined)
      return errorResponse(400, 'invalid_request_error', 'anthropic-version: header is required', requestId);
    let body: Record<string, unknown>;
    try {
      body = (await c.req.json()) as Record<string, unknown>;
    } catch {
      return errorResponse(
        400,
        'invalid_request_error',
        'There was an issue with your request body: not valid JSON',
        requestId,
      );
    }
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((v, k) => (headers[k] = v));
    requests.push({ headers, body });
    const problem = anthropicRequestProblem(body);
    if (problem) return errorResponse(400, 'invalid_request_error', problem, requestId);
    const key = JSON.stringify(body);
    const turn = opts.deterministic && seen.has(key) ? seen.get(key) : turns.shift();
    if (opts.deterministic && turn) seen.set(key, turn);
    if (!turn) return errorResponse(500, 'api_error', 'the fake has no scripted turn left', requestId);
    const model = String(body['model']);
    if (turn.kind === 'error') return errorResponse(turn.status, turn.type, turn.message, requestId);
    if (turn.kind === 'raw')
      return new Response(turn.body, {
        status: turn.status,
        headers: { 'content-type': turn.contentType ?? 'application/json', 'request-id': requestId },
      });
    if (turn.kind === 'hang') return new Promise<Response>(() => undefined);
    const id = turn.kind === 'reply' && turn.id !== undefined ? turn.id : `msg_${n}`;
    if (turn.kind === 'stream_error') {
      const start = streamEvents({ kind: 'reply', content: [{ type: 'text', text: turn.text }] }, model, id).slice(
        0,
        4,
      );
      return sse([...start, ev('error', { error: { type: turn.type, message: turn.message } })], requestId);
    }
    if (turn.kind === 'stream_cut')
      return sse(
        streamEvents({ kind: 'reply', content: [{ type: 'text', text: turn.text }] }, model, id).slice(0, 4),
        requestId,
      );
    reportedUsage.push(usageBody(turn.usage));
    if (body['stream'] === true) return sse(streamEvents(turn, model, id), requestId);
    return new Response(JSON.stringify(message(turn, model, id)), {
      headers: { 'content-type': 'application/json', 'request-id': requestId },
    });
  });
  return { app, requests, turns, reportedUsage };
}
