/**
 * A small Server-Sent Events parser over Web Streams (WHATWG HTML "event stream interpretation"):
 * works the same in browsers, workerd and Node. See docs/decisions for why not a package.
 * @module
 */

/** One dispatched event. `event` is `'message'` when the stream named none. */
export type SSEEvent = { readonly event: string; readonly data: string; readonly id: string | null };

/**
 * Parse an SSE byte stream into events. Handles CRLF / LF / CR line ends split across chunks,
 * comments (`:`), multi-line `data`, a leading BOM, and drops an unterminated last event (the
 * spec's rule: an event is dispatched only by a blank line). Rejects with `signal.reason` when
 * aborted; cancels the stream when the consumer stops early.
 */
export async function* parseSSE(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<SSEEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  const state: ParseState = { buffer: '', data: [], event: '', id: null, first: true, pendingCR: false };
  try {
    for (;;) {
      signal.throwIfAborted();
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (e) {
        // An aborted fetch errors its body stream with its own AbortError; the caller's reason wins.
        signal.throwIfAborted();
        throw e;
      }
      const { done, value } = chunk;
      signal.throwIfAborted();
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      yield* feed(state, text);
      if (done) return;
    }
  } finally {
    // Releases the connection when the consumer stops early or an error is thrown.
    await reader.cancel().catch(() => undefined);
  }
}

type ParseState = {
  buffer: string;
  data: string[];
  event: string;
  id: string | null;
  first: boolean;
  pendingCR: boolean;
};

function* feed(state: ParseState, text: string): Generator<SSEEvent> {
  let chunk = text;
  if (state.first && chunk.length > 0) {
    state.first = false;
    if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
  }
  // A CR ending the previous chunk already ended its line; a LF right after it is the same break.
  if (state.pendingCR && chunk.startsWith('\n')) chunk = chunk.slice(1);
  state.pendingCR = false;
  state.buffer += chunk;
  for (;;) {
    const m = /\r\n|\r|\n/.exec(state.buffer);
    if (!m) return;
    if (m[0] === '\r' && m.index === state.buffer.length - 1) state.pendingCR = true;
    const line = state.buffer.slice(0, m.index);
    state.buffer = state.buffer.slice(m.index + m[0].length);
    const event = processLine(state, line);
    if (event) yield event;
  }
}

function processLine(state: ParseState, line: string): SSEEvent | null {
  if (line === '') {
    if (state.data.length === 0) {
      state.event = '';
      return null;
    }
    const event: SSEEvent = {
      event: state.event === '' ? 'message' : state.event,
      data: state.data.join('\n'),
      id: state.id,
    };
    state.data = [];
    state.event = '';
    return event;
  }
  if (line.startsWith(':')) return null;
  const colon = line.indexOf(':');
  const field = colon === -1 ? line : line.slice(0, colon);
  let value = colon === -1 ? '' : line.slice(colon + 1);
  if (value.startsWith(' ')) value = value.slice(1);
  if (field === 'data') state.data.push(value);
  else if (field === 'event') state.event = value;
  else if (field === 'id' && !value.includes('\0')) state.id = value;
  return null;
}
