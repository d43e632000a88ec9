/**
 * The viewer's read API as the page calls it (same origin; the access key travels in a cookie).
 * Shapes mirror src/platform-node/view-model.ts.
 * @module
 */

export type ApiUsage = { inputTokens: number; outputTokens: number; cachedInputTokens?: number; reasoningTokens?: number };
export type ApiRunRow = { runId: string; status: string; stopReason: string | null; steps: number | null; createdAt: string | null; updatedAt: string | null; error: string | null };
export type Pending = { resultId: string; stepIndex: number; kind: string; target: string; action: ApiAction | null; accepts: string[]; requestedAt: string | null };
export type ApiAction = { kind: 'tool_call'; name: string; arguments: unknown } | { kind: 'code'; source: string };
export type InFlight = { stepIndex: number; resolution: string; target: string; action: ApiAction | null; resultId: string; replayPolicy: string; modelText: string | null };
export type Summary = ApiRunRow & {
  state: string;
  finalAnswer: string | null;
  validActions: number;
  usage: ApiUsage | null;
  warnings: string[];
  lastSeq: number;
  span: { start: string | null; end: string | null };
  inFlight: InFlight | null;
  pending: Pending | null;
  answering: { enabled: boolean; why: string | null };
};
export type Step = {
  stepIndex: number;
  decision: string;
  modelText: string | null;
  reasoning: string | null;
  actionRepr: string | null;
  observation: string | null;
  observationIsSynthetic: boolean;
  actionStatus: string | null;
  finalAnswer: string | null;
  explanation: string | null;
  usage: ApiUsage | null;
  finishReason: string | null;
  startedAt: string;
  endedAt: string;
};
export type ApiStepRow = { step: Step; action: ApiAction | null; input: { resultId: string; kind: string; requestedAt: string | null; reply: Record<string, unknown> | null; receivedAt: string | null }[]; resumed: string | null; observationClippedChars: number };
export type Described = { source: 'dir' | 'worker'; where: string; answering: { enabled: boolean; why: string | null } };

/** A refusal of the viewer, with its status and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function get<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new ApiError(res.status, await messageOf(res));
  return (await res.json()) as T;
}

async function messageOf(res: Response): Promise<string> {
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  return body?.error?.message ?? `HTTP ${res.status}`;
}

const runPath = (runId: string, rest = ''): string => `/runs/${encodeURIComponent(runId)}${rest}`;

export const api = {
  describe: () => get<Described>('/viewer'),
  runs: async () => (await get<{ runs: ApiRunRow[] }>('/runs')).runs,
  summary: (runId: string) => get<Summary>(runPath(runId)),
  steps: async (runId: string, from: number, limit: number, full = false) => (await get<{ steps: ApiStepRow[] }>(runPath(runId, `/steps?from=${from}&limit=${limit}${full ? '&full=1' : ''}`))).steps,
  logUrl: (runId: string) => runPath(runId, '/log'),
  async answer(runId: string, reply: Record<string, string>): Promise<void> {
    const res = await fetch(runPath(runId, '/input'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(reply) });
    if (res.status !== 202) throw new ApiError(res.status, await messageOf(res));
  },
};

/**
 * Follow a run's records (server-sent events read with `fetch`), calling `onRecord` for each
 * kind that lands, from after `afterSeq`; reconnects after the last id seen until `run_ended`
 * or `signal` aborts.
 */
export async function follow(runId: string, afterSeq: number, onRecord: (kind: string) => void, signal: AbortSignal): Promise<void> {
  let last = afterSeq;
  while (!signal.aborted) {
    try {
      const res = await fetch(runPath(runId, '/events'), { headers: last < 0 ? {} : { 'last-event-id': String(last) }, signal });
      if (res.status === 204 || !res.body) return;
      if (!res.ok) throw new ApiError(res.status, await messageOf(res));
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const id = /^id: (\d+)$/m.exec(block)?.[1];
          const kind = /^event: (.+)$/m.exec(block)?.[1] ?? 'record';
          if (id === undefined) continue;
          last = Number(id);
          onRecord(kind);
          if (kind === 'run_ended') return;
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && e.status < 500) return;
    }
    await new Promise((ok) => setTimeout(ok, 1000));
  }
}
