/**
 * An MCP tool result as observation text: text parts verbatim, other parts described (what they
 * are, their media type and size, or the address they point to), bounded in length. Pure.
 * @module
 */
import { jsonProblem, MAX_JSON_DEPTH } from '../core/internal-entry.ts';

/** Default of {@link McpToolsOptions.maxResultChars}: enough for a page of output, far below a context window. */
export const DEFAULT_MAX_RESULT_CHARS = 100_000;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Bytes that a base64 string decodes to (its length as sent, without decoding it). */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function describeBinary(kind: string, mimeType: unknown, data: unknown, uri?: string): string {
  const parts = [
    uri,
    str(mimeType) ?? 'unknown type',
    typeof data === 'string' ? `${base64Bytes(data)} bytes` : 'no data',
  ];
  return `[${kind}: ${parts.filter((p) => p !== undefined).join(', ')}]`;
}

/** One content part as text. Parts of a kind this library does not know are named, not dropped. */
export function renderPart(part: unknown): string {
  if (!isRecord(part)) return '[a content part that is not an object]';
  switch (part['type']) {
    case 'text':
      return str(part['text']) ?? '[a text part without text]';
    case 'image':
    case 'audio':
      return describeBinary(part['type'], part['mimeType'], part['data']);
    case 'resource_link': {
      const extra = [str(part['name']), str(part['mimeType'])].filter((p) => p !== null && p !== '');
      return `[resource link: ${str(part['uri']) ?? '(no uri)'}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}]`;
    }
    case 'resource': {
      const res = isRecord(part['resource']) ? part['resource'] : {};
      const uri = str(res['uri']) ?? '(no uri)';
      const text = str(res['text']);
      if (text !== null) return `[resource: ${uri}]\n${text}`;
      return describeBinary('resource', res['mimeType'], res['blob'], uri);
    }
    default:
      return `[a content part of type ${JSON.stringify(String(part['type']))}]`;
  }
}

/** The structured content {@link renderResult} shows (when there are no content parts), or undefined. */
function shownStructure(r: Record<string, unknown>): unknown {
  const content = Array.isArray(r['content']) ? r['content'] : [];
  return content.length === 0 ? r['structuredContent'] : undefined;
}

/**
 * Why a `tools/call` result cannot be shown to the model, or null. Only structured content shown
 * as JSON can be: nested deeper than any value the library keeps (`MAX_JSON_DEPTH`), it would
 * stop `JSON.stringify` at a depth each runtime puts elsewhere. Content parts are read one field
 * deep, so whatever is nested in them is never walked.
 */
export function resultProblem(result: unknown): string | null {
  const shown = isRecord(result) ? shownStructure(result) : undefined;
  if (shown === undefined || jsonProblem(shown, '', MAX_JSON_DEPTH) === null) return null;
  return `structured content nested more than ${MAX_JSON_DEPTH} levels deep, which cannot be shown to the model`;
}

/**
 * A `tools/call` result as one text: its content parts, one after the other on their own lines;
 * the structured content as JSON when there are no parts (a server should send both, some send
 * only the latter). An `isError` result is said to be one, so the model reads it as a failure.
 * Throws a `TypeError` for a result {@link resultProblem} refuses.
 */
export function renderResult(result: unknown): string {
  const problem = resultProblem(result);
  if (problem !== null) throw new TypeError(`a tool result with ${problem}`);
  const r = isRecord(result) ? result : {};
  const content = Array.isArray(r['content']) ? r['content'] : [];
  let body = content.map(renderPart).join('\n');
  const shown = shownStructure(r);
  if (shown !== undefined) body = JSON.stringify(shown) ?? '';
  return r['isError'] === true ? `The tool reported an error: ${body || '(no details)'}` : body;
}

/**
 * `text` cut to at most `max` characters (never inside a surrogate pair), with a marker saying
 * how much was left out, so neither the log nor the model's context takes a runaway result whole.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (dropped: number) => `\n[… truncated: ${dropped} of ${text.length} characters not shown]`;
  // A limit too small for the marker still holds: the short marker alone, cut to the limit.
  if (max <= marker(text.length).length) return '[… truncated]'.slice(0, max);
  let keep = max - marker(text.length).length;
  const last = text.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep -= 1;
  return text.slice(0, keep) + marker(text.length - keep);
}
