/**
 * What a response body said about one JSON-RPC request, read alongside the SDK's own reading of
 * it: whether it answered that request (or only another one), and the last event id it carried —
 * the id the SDK resumes an unanswered stream from. It reads an event stream the way the SDK's
 * parser does (an event counts once a blank line ends it and it has a data line; its id only then),
 * so the two agree on what the stream held. Pure: no I/O.
 * @module
 */

/** What a body held for the request: its answer, only another request's answer, or no answer. */
export type Answered =
  | { readonly kind: 'own' }
  | { readonly kind: 'other'; readonly id: unknown }
  | { readonly kind: 'none' }
  | { readonly kind: 'unreadable' };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `m` is a JSON-RPC response (a result or an error), not a request or notification the server sent. */
function responseId(m: unknown): { readonly id: unknown } | null {
  if (!isRecord(m) || m['jsonrpc'] !== '2.0' || 'method' in m) return null;
  if (!isRecord(m['result']) && !isRecord(m['error'])) return null;
  return typeof m['id'] === 'string' || typeof m['id'] === 'number' ? { id: m['id'] } : null;
}

/** One response body, fed as it arrives. */
export class AnswerScan {
  readonly #id: unknown;
  readonly #sse: boolean;
  readonly #decoder = new TextDecoder();
  /** The line not yet ended (an event stream), or the whole body so far (JSON), in pieces. */
  #pieces: string[] = [];
  #pendingCR = false;
  #data: string[] = [];
  #eventId: string | undefined;
  #eventType: string | undefined;
  #own = false;
  #other: { readonly id: unknown } | null = null;
  #unreadable = false;
  /** The id of the last event that carried one: where the SDK resumes this stream from. */
  lastEventId: string | undefined;

  /** `id`: the request's JSON-RPC id; `sse`: an event stream, else one JSON body. */
  constructor(id: unknown, sse: boolean) {
    this.#id = id;
    this.#sse = sse;
  }

  feed(bytes: Uint8Array): void {
    const text = this.#decoder.decode(bytes, { stream: true });
    if (this.#sse) this.#lines(text);
    else this.#pieces.push(text);
  }

  /** The body ended cleanly: what it held. An event not ended by a blank line is dropped, as the SDK drops it. */
  end(): Answered {
    const rest = this.#decoder.decode();
    if (this.#sse) this.#lines(rest);
    else this.#json(this.#pieces.join('') + rest);
    if (this.#own) return { kind: 'own' };
    if (this.#unreadable) return { kind: 'unreadable' };
    return this.#other ? { kind: 'other', id: this.#other.id } : { kind: 'none' };
  }

  #lines(text: string): void {
    let start = 0;
    if (this.#pendingCR && text.charCodeAt(0) === 10) start = 1; // the LF of a CRLF split across chunks
    this.#pendingCR = false;
    const breaks = /[\r\n]/g;
    breaks.lastIndex = start;
    for (let m = breaks.exec(text); m !== null; m = breaks.exec(text)) {
      this.#pieces.push(text.slice(start, m.index));
      this.#line(this.#pieces.join(''));
      this.#pieces = [];
      start = m.index + 1;
      if (m[0] === '\r') {
        if (start === text.length) this.#pendingCR = true;
        else if (text.charCodeAt(start) === 10) start += 1;
        breaks.lastIndex = start;
      }
    }
    if (start < text.length) this.#pieces.push(text.slice(start));
  }

  #line(line: string): void {
    if (line === '') return this.#dispatch();
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(line.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#eventType = value || undefined;
    else if (field === 'id' && !value.includes('\0')) this.#eventId = value;
  }

  #dispatch(): void {
    const { data, eventId, eventType } = { data: this.#data, eventId: this.#eventId, eventType: this.#eventType };
    this.#data = [];
    this.#eventId = undefined;
    this.#eventType = undefined;
    if (data.length === 0) return;
    if (eventId) this.lastEventId = eventId;
    const text = data.join('\n');
    if (text === '' || (eventType !== undefined && eventType !== 'message')) return;
    try {
      this.#saw(JSON.parse(text));
    } catch {
      // Not JSON: the SDK reports it and reads on; it answers nothing.
    }
  }

  #json(text: string): void {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      this.#unreadable = true; // the SDK fails the request itself, at once
      return;
    }
    for (const m of Array.isArray(body) ? body : [body]) this.#saw(m);
  }

  #saw(message: unknown): void {
    const response = responseId(message);
    if (response === null) return;
    if (response.id === this.#id) this.#own = true;
    else this.#other ??= response;
  }
}
