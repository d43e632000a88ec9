/**
 * A loopback OTLP/HTTP trace collector for tests: `POST /v1/traces` with an OTLP/JSON body (what
 * `@opentelemetry/exporter-trace-otlp-http` sends by default: `Content-Type: application/json`,
 * ids as hex strings, attribute values as `AnyValue` objects), gzip or not. It parses every span
 * it receives; a body of another content type (protobuf) is answered 415, one that is not OTLP/JSON
 * 400, and both are counted as refused, so a test sees them.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** A span as the collector received it. */
export type ReceivedSpan = {
  readonly service: string | null;
  readonly scope: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  readonly status: { readonly code: number; readonly message?: string };
};

export type Collector = {
  /** The traces endpoint, `http://127.0.0.1:<port>/v1/traces`. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Why each refused request was refused. */
  readonly refused: string[];
  close(): Promise<void>;
};

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown, what: string): unknown[] => {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new Error(`${what} is not an array`);
  return v;
};
const hex = (v: unknown, length: number, what: string): string => {
  if (typeof v !== 'string' || !new RegExp(`^[0-9a-f]{${length}}$`).test(v))
    throw new Error(`${what} is not ${length} hex digits: ${JSON.stringify(v)}`);
  return v;
};

/** An OTLP `AnyValue` as a plain value (int64s as numbers: the tests' counts are small). */
function anyValue(v: unknown): unknown {
  if (!isObject(v)) throw new Error(`an attribute value is not an object: ${JSON.stringify(v)}`);
  if ('stringValue' in v) return v['stringValue'];
  if ('boolValue' in v) return v['boolValue'];
  if ('intValue' in v) return Number(v['intValue']);
  if ('doubleValue' in v) return Number(v['doubleValue']);
  if ('arrayValue' in v) return list((v['arrayValue'] as Json | undefined)?.['values'], 'arrayValue').map(anyValue);
  if ('kvlistValue' in v) return attributes((v['kvlistValue'] as Json | undefined)?.['values']);
  if ('bytesValue' in v) return v['bytesValue'];
  throw new Error(`an attribute value of no known kind: ${JSON.stringify(v)}`);
}

function attributes(v: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list(v, 'attributes')) {
    if (!isObject(kv) || typeof kv['key'] !== 'string') throw new Error('an attribute without a key');
    out[kv['key']] = anyValue(kv['value']);
  }
  return out;
}

function span(s: unknown, service: string | null, scope: string): ReceivedSpan {
  if (!isObject(s) || typeof s['name'] !== 'string') throw new Error('a span without a name');
  const parent = s['parentSpanId'];
  const status = isObject(s['status']) ? s['status'] : {};
  return {
    service,
    scope,
    traceId: hex(s['traceId'], 32, 'traceId'),
    spanId: hex(s['spanId'], 16, 'spanId'),
    parentSpanId: parent === undefined || parent === '' ? null : hex(parent, 16, 'parentSpanId'),
    name: s['name'],
    kind: Number(s['kind'] ?? 0),
    attributes: attributes(s['attributes']),
    links: list(s['links'], 'links').map((l) => {
      if (!isObject(l)) throw new Error('a link is not an object');
      return { traceId: hex(l['traceId'], 32, 'link traceId'), spanId: hex(l['spanId'], 16, 'link spanId') };
    }),
    status: {
      code: Number(status['code'] ?? 0),
      ...(typeof status['message'] === 'string' ? { message: status['message'] } : {}),
    },
  };
}

/** The spans of an `ExportTraceServiceRequest` in its JSON form. */
export function parseOtlpJson(body: unknown): ReceivedSpan[] {
  if (!isObject(body)) throw new Error('the body is not a JSON object');
  const spans: ReceivedSpan[] = [];
  for (const rs of list(body['resourceSpans'], 'resourceSpans')) {
    if (!isObject(rs)) throw new Error('resourceSpans holds a non-object');
    const resource = attributes(isObject(rs['resource']) ? rs['resource']['attributes'] : undefined);
    const service = typeof resource['service.name'] === 'string' ? resource['service.name'] : null;
    for (const ss of list(rs['scopeSpans'], 'scopeSpans')) {
      if (!isObject(ss)) throw new Error('scopeSpans holds a non-object');
      const scope = isObject(ss['scope']) && typeof ss['scope']['name'] === 'string' ? ss['scope']['name'] : '';
      for (const s of list(ss['spans'], 'spans')) spans.push(span(s, service, scope));
    }
  }
  return spans;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

/** Start a collector on a free loopback port. */
export async function startCollector(): Promise<Collector> {
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const refuse = (res: ServerResponse, status: number, why: string): void => {
    refused.push(why);
    res.writeHead(status, { 'content-type': 'text/plain' }).end(why);
  };
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') return refuse(res, 404, `${req.method} ${req.url}`);
    const type = req.headers['content-type'] ?? '';
    if (!type.startsWith('application/json')) return refuse(res, 415, `content type ${type}`);
    bodyOf(req).then(
      (body) => {
        try {
          spans.push(...parseOtlpJson(JSON.parse(body.toString('utf8'))));
        } catch (e) {
          return refuse(res, 400, `not OTLP/JSON: ${String(e)}`);
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      },
      (e: unknown) => refuse(res, 400, `unreadable body: ${String(e)}`),
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    refused,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
