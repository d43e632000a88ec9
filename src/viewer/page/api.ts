/**
 * The viewer's read API as the page calls it (same origin). The access key arrives in the
 * printed URL's fragment (`#key=…`), is kept in this tab's sessionStorage (which belongs to this
 * origin, port included) and goes with every request as `Authorization: Bearer <key>` — never in a
 * cookie, which the browser would hand to every other server on this host (decision 0048).
 * Shapes mirror src/viewer/server/view-model.ts.
 * @module
 */

export type ApiUsage = {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  reasoningTokens?: number;
};
export type ApiRunRow = {
  runId: string;
  status: string;
  stopReason: string | null;
  steps: number | null;
  createdAt: string | null;
  updatedAt: string | null;
  error: string | null;
  /** The run whose sub-agent this run is, when it is listed too (the list is in tree order). */
  parentRunId?: string | null;
};
export type Pending = {
  resultId: string;
  stepIndex: number;
  kind: string;
  target: string;
  action: ApiAction | null;
  accepts: string[];
  requestedAt: string | null;
  /** A sub-agent's request (kind `child`): what it really asks, in which run; null for the run's own. */
  asked?: ApiAsked | null;
};
/** The innermost request of a sub-agent's request, and the sub-agent run that asks it. */
export type ApiAsked = {
  runId: string;
  resultId: string;
  stepIndex: number;
  kind: string;
  target: string;
  action: ApiAction | null;
};
/** A sub-agent run a run's log names: finished (its outcome recorded), or awaited on a request. */
export type ApiChildRun = { runId: string; stepIndex: number; resultId: string; state: string };
/** Where a reply to a sub-agent run's request goes: the run waiting on it, and its request. */
export type ApiReplyRoute = { runId: string; resultId: string };
export type ApiAction = { kind: 'tool_call'; name: string; arguments: unknown } | { kind: 'code'; source: string };
/** One call of a step with several, in flight: its action and where it stands (`awaiting approval: …`, …). */
export type ApiCallInFlight = { resultId: string; action: ApiAction | null; repr: string; status: string };
export type InFlight = {
  stepIndex: number;
  resolution: string;
  target: string;
  action: ApiAction | null;
  resultId: string;
  replayPolicy: string;
  modelText: string | null;
  /** A step with several calls: each call; null for any other step. */
  calls: ApiCallInFlight[] | null;
};
/** Where the run went on under new code: the first step under it, why, what changed, the tools added and removed. */
export type ApiUpgrade = {
  stepIndex: number;
  reason: string;
  at: string;
  changed: string[];
  tools: { added: string[]; removed: string[] };
  snapshotHash: string;
};
/**
 * Where a later driver took the run over: the step it carried on, how (`replay_action`, …; null at
 * a step boundary), when, and its driver session (2 for the first that took over; 1 started the run).
 */
export type ApiResume = { stepIndex: number; resolution: string | null; at: string; driver: number };
export type Summary = ApiRunRow & {
  state: string;
  finalAnswer: string | null;
  validActions: number;
  usage: ApiUsage | null;
  warnings: string[];
  lastSeq: number;
  span: { start: string | null; end: string | null };
  inFlight: InFlight | null;
  /** The first open request: the first of `openRequests`. */
  pending: Pending | null;
  /** Every open request, in call order (several while a step with several calls waits for them). */
  openRequests: Pending[];
  upgrades: ApiUpgrade[];
  /** Where later drivers took the run over, in order (absent from a viewer older than the marks). */
  resumes?: ApiResume[];
  answering: { enabled: boolean; why: string | null };
  /** The sub-agent runs the log names (absent from a viewer older than sub-agents). */
  children?: ApiChildRun[];
  /** A sub-agent's run: its parent, when the viewer has it. */
  parentRunId?: string | null;
  /** A sub-agent's run its parent waits on: where a reply to it goes. */
  replyTo?: ApiReplyRoute | null;
  /** A fork: the run and step it was made from. */
  forkedFrom?: { runId: string; atStep: number } | null;
  /** A run ended by a stop someone asked for: the request and its reason. */
  stopRequest?: { reason?: string } | null;
};
/** One message handed to the model: where it comes from, and the characters the page was not sent. */
export type ApiMessage = {
  part: 'context' | 'tools' | 'injection' | 'goal' | 'history';
  step: number | null;
  message: { role: string; content: ApiBlock[] };
  clippedChars: number;
};
export type ApiBlock =
  | { type: 'text' | 'reasoning'; text: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_result'; toolCallId: string; text: string }
  | { type: 'opaque'; data: unknown };
/** A page of what a step handed its model, and what the log cannot give back. */
export type ApiMessages = {
  stepIndex: number;
  total: number;
  from: number;
  messages: ApiMessage[];
  tools: { name: string; description: string; parameters: unknown }[];
  binding: Record<string, string>;
  limits: string[];
};
/** The answer to a stop: kept (and who ends the run, when), or the run had ended. */
export type ApiStopAnswer = { runId: string; requested: boolean; message?: string };
/** The answer to a fork: the new run and where it came from. */
export type ApiForkCreated = { runId: string; url: string; forkedFrom: { runId: string; atStep: number } };
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
  /** A step that ran several calls: each call's outcome, in the provider's order. */
  calls?: ApiCall[];
  /** A one-call step whose action ran a sub-agent: the child run's id. */
  childRunId?: string;
};
/** One call of a step with several, as its step record lists it. */
export type ApiCall = {
  resultId: string;
  toolCallId: string | null;
  actionRepr: string;
  status: string;
  observation: string;
  observationIsSynthetic: boolean;
  /** The call ran a sub-agent: the child run's id. */
  childRunId?: string;
};
export type ApiStepRow = {
  step: Step;
  action: ApiAction | null;
  input: {
    resultId: string;
    kind: string;
    requestedAt: string | null;
    reply: Record<string, unknown> | null;
    receivedAt: string | null;
  }[];
  resumed: string | null;
  /** The driver session that carried the step out (1 started the run); absent from a viewer older than the marks. */
  driver?: number;
  observationClippedChars: number;
};
export type Described = {
  source: 'dir' | 'worker';
  where: string;
  answering: { enabled: boolean; why: string | null };
};

/** A refusal of the viewer, with its status, message and error code (`run_identity_mismatch`, …). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

const KEY_ITEM = 'polyloop-view-key';
let memoryKey: string | null = null;

/**
 * Move the access key from the URL's fragment (`#key=…`) into this tab's sessionStorage and out of
 * the address bar and the history (so it is not left on screen, in a bookmark or a shared
 * screenshot). Call before anything else reads `location.hash`.
 */
export function takeKeyFromUrl(): void {
  const m = /^#key=([\w-]{1,200})$/.exec(location.hash);
  if (!m) return;
  memoryKey = m[1] as string;
  try {
    sessionStorage.setItem(KEY_ITEM, memoryKey);
  } catch {
    // Storage refused (a locked-down profile): the key lives in memory for this page's life.
  }
  history.replaceState(null, '', `${location.pathname}${location.search}#/`);
}

function accessKey(): string | null {
  try {
    return sessionStorage.getItem(KEY_ITEM) ?? memoryKey;
  } catch {
    return memoryKey;
  }
}

/** The headers every API request carries: the access key, when the page has one. */
function withKey(headers: Record<string, string> = {}): Record<string, string> {
  const key = accessKey();
  return key === null ? headers : { ...headers, authorization: `Bearer ${key}` };
}

async function get<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: withKey({ accept: 'application/json' }) });
  if (!res.ok) throw new ApiError(res.status, await messageOf(res));
  return (await res.json()) as T;
}

async function messageOf(res: Response): Promise<string> {
  return (await refusalOf(res)).message;
}

async function refusalOf(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => null)) as { error?: { message?: string; code?: string } } | null;
  return new ApiError(res.status, body?.error?.message ?? `HTTP ${res.status}`, body?.error?.code ?? null);
}

/** POST `body` as JSON; resolves with the answer's body when its status is one of `done`. */
async function post<T = unknown>(path: string, body: unknown, done: readonly number[] = [202]): Promise<T> {
  const headers = withKey({ 'content-type': 'application/json' });
  const res = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!done.includes(res.status)) throw await refusalOf(res);
  return (await res.json().catch(() => ({}))) as T;
}

const runPath = (runId: string, rest = ''): string => `/runs/${encodeURIComponent(runId)}${rest}`;

export const api = {
  describe: () => get<Described>('/viewer'),
  runs: async () => (await get<{ runs: ApiRunRow[] }>('/runs')).runs,
  summary: (runId: string) => get<Summary>(runPath(runId)),
  steps: async (runId: string, from: number, limit: number, full = false) =>
    (await get<{ steps: ApiStepRow[] }>(runPath(runId, `/steps?from=${from}&limit=${limit}${full ? '&full=1' : ''}`)))
      .steps,
  /** The run's log as a file to save (fetched with the key: a plain link would go without it). */
  async log(runId: string): Promise<Blob> {
    const res = await fetch(runPath(runId, '/log'), { headers: withKey() });
    if (!res.ok) throw new ApiError(res.status, await messageOf(res));
    return res.blob();
  },
  answer: (runId: string, reply: Reply) => post(runPath(runId, '/input'), reply),
  /** Move the run onto the viewer's agent as it is now, with `reason`, and carry out `input` (a reply) under it. */
  upgrade: (runId: string, reason: string, input: Reply | null) =>
    post(runPath(runId, '/upgrade'), input === null ? { reason } : { reason, input }),
  /** Ask the run to stop (a reason, or none). */
  stop: (runId: string, reason: string | null) =>
    post<ApiStopAnswer>(runPath(runId, '/stop'), reason === null ? {} : { reason }, [200, 202]),
  /** A new run from step `atStep` of the run. */
  fork: (runId: string, atStep: number, newRunId: string) =>
    post<ApiForkCreated>(runPath(runId, '/fork'), { atStep, newRunId }, [201]),
  /** What step `step` handed its model, `limit` messages from `from`. */
  messages: (runId: string, step: number, from: number, limit: number) =>
    get<ApiMessages>(runPath(runId, `/steps/${step}/messages?from=${from}&limit=${limit}`)),
};

/** A reply to a request: its kind, the request's id, its text field, and for an approval edited arguments. */
export type Reply = Record<string, unknown> & { kind: string; resultId: string };

/**
 * Follow a run's records (server-sent events read with `fetch` and a stream reader rather than
 * `EventSource`, which cannot send the Authorization header), calling `onRecord` for each
 * kind that lands, from after `afterSeq`; reconnects after the last id seen until `run_ended`
 * or `signal` aborts.
 */
export async function follow(
  runId: string,
  afterSeq: number,
  onRecord: (kind: string) => void,
  signal: AbortSignal,
): Promise<void> {
  let last = afterSeq;
  while (!signal.aborted) {
    try {
      const res = await fetch(runPath(runId, '/events'), {
        headers: withKey(last < 0 ? {} : { 'last-event-id': String(last) }),
        signal,
      });
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
