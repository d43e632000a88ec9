/** Helpers for driving the demo Worker over HTTP inside workerd. */
import { exports } from 'cloudflare:workers';

export const TOKEN = 'test-token';
export const BASE = 'http://polyloop.test';

export function call(path: string, init: RequestInit & { token?: string | null } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = init.token === undefined ? TOKEN : init.token;
  if (token !== null) headers.set('authorization', `Bearer ${token}`);
  if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  return exports.default.fetch(`${BASE}${path}`, { ...init, headers });
}

export async function startRun(input: unknown, runId?: string): Promise<string> {
  const res = await call('/runs', {
    method: 'POST',
    body: JSON.stringify(runId === undefined ? { input } : { runId, input }),
  });
  if (res.status !== 201) throw new Error(`start failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { runId: string }).runId;
}

export type Pending = {
  resultId: string;
  stepIndex: number;
  kind: 'approval' | 'answer' | 'settle';
  target: 'action' | 'model_call';
  decision: Record<string, unknown> | null;
};

export type Status = {
  runId: string;
  status: 'running' | 'awaiting_input' | 'ended' | 'halted';
  error: string | null;
  stopReason: string | null;
  finalAnswer: string | null;
  steps: number;
  validActions: number;
  pending: Pending | null;
  openRequests: Pending[];
};

/** `prefix` '/probes' reaches a run of the probe objects (see fixtures/probe-worker.ts). */
export async function status(runId: string, prefix = ''): Promise<Status> {
  const res = await call(`${prefix}/runs/${runId}`);
  if (res.status !== 200) throw new Error(`status failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as Status;
}

export async function waitFor(
  runId: string,
  done: (s: Status) => boolean,
  timeoutMs = 15_000,
  prefix = '',
): Promise<Status> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await status(runId, prefix);
    if (done(s)) return s;
    if (Date.now() > until) throw new Error(`timed out waiting on ${runId}: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export type SseEvent = { id: number; event: string; data: string };

/** Read SSE events from a response until `stopAfter` events arrived (then cancel) or the stream ends. */
export async function readEvents(res: Response, stopAfter = Infinity): Promise<SseEvent[]> {
  if (!res.body) throw new Error('no body');
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buffer = '';
  while (events.length < stopAfter) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    let at: number;
    while ((at = buffer.indexOf('\n\n')) >= 0 && events.length < stopAfter) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const i = line.indexOf(': ');
        fields.set(line.slice(0, i), line.slice(i + 2));
      }
      if (fields.has('id'))
        events.push({ id: Number(fields.get('id')), event: fields.get('event') ?? '', data: fields.get('data') ?? '' });
    }
  }
  await reader.cancel().catch(() => undefined);
  return events;
}
