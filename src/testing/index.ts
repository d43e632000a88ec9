/**
 * `polyloop/testing` — tools for testing agents: a scripted model, a small JSON action protocol
 * interpreter, a fault-injecting store that "crashes" after the k-th write, and an event sink
 * that collects. For our own tests and for users proving their agents survive a crash at every
 * write point.
 * @module
 */
import type {
  Decision,
  DecisionInterpreter,
  EventSink,
  IntentRecord,
  JsonValue,
  LogRecord,
  ModelCall,
  ModelCaller,
  ModelReply,
  ReadLogOptions,
  ReleaseLease,
  ResultRecord,
  RunEndedRecord,
  RunEvent,
  RunStartedRecord,
  RunStore,
  SeamParams,
  StepWriteRecord,
} from '../core/index.ts';

/** One scripted reply: a full reply, or just its text. */
export type ScriptedReply = ModelReply | string;

/** A reply by call sequence (array) or as a function of the call (messages, callSeq, …). */
export type Script = readonly ScriptedReply[] | ((call: ModelCall) => ScriptedReply | Promise<ScriptedReply>);

/** A {@link ModelCaller} that replays a script, and remembers every call it received. */
export type ScriptedModel = ModelCaller & {
  /** Every call received, in order, with its messages copied as they were at the call. */
  readonly calls: ModelCall[];
};

/**
 * A deterministic model. Replies by `callSeq` from an array, or by a function of the call.
 * A call past the end of an array script rejects. `delayMs` makes each call take visible time
 * (and honours abort while waiting).
 *
 * @example
 * const model = scriptedModel(['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}']);
 */
export function scriptedModel(script: Script, opts: { readonly model?: string; readonly delayMs?: number } = {}): ScriptedModel {
  const calls: ModelCall[] = [];
  const params: SeamParams = Object.freeze({ model: opts.model ?? 'scripted', scripted: true });
  return {
    params,
    calls,
    async call(call: ModelCall): Promise<ModelReply> {
      calls.push({ ...call, messages: [...call.messages] });
      call.signal.throwIfAborted();
      if (opts.delayMs) await sleep(opts.delayMs, call.signal);
      let reply: ScriptedReply | undefined;
      if (typeof script === 'function') reply = await script(call);
      else reply = script[call.callSeq];
      if (reply === undefined) throw new Error(`scripted model has no reply for call ${call.callSeq}`);
      return typeof reply === 'string' ? { callId: `scripted-${call.callSeq}`, text: reply, reasoning: null } : reply;
    },
  };
}

/** Resolves after `ms`, or rejects with `signal.reason` when aborted first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * An interpreter for a tiny text protocol, handy for tests and demos: the reply text is JSON,
 * `{"tool": name, "args": {…}}` for an action or `{"final": "answer"}` for a final answer.
 * Anything else is `invalid`, with an explanation the model can act on.
 */
export function jsonActionInterpreter(): DecisionInterpreter {
  return {
    params: Object.freeze({ interpreter: 'json-action', version: 1 }),
    interpret(reply: ModelReply): Decision {
      const historyText = reply.text;
      let parsed: unknown;
      try {
        parsed = JSON.parse(reply.text);
      } catch {
        return { kind: 'invalid', explanation: 'Your reply was not valid JSON. Reply with {"tool": name, "args": {...}} or {"final": "answer"}.', historyText };
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        return { kind: 'invalid', explanation: 'Your reply must be a JSON object with "tool" or "final".', historyText };
      }
      const obj = parsed as Record<string, unknown>;
      if (typeof obj['final'] === 'string') return { kind: 'final', answer: obj['final'], historyText };
      if (typeof obj['tool'] === 'string') {
        const args = (obj['args'] ?? {}) as JsonValue;
        return {
          kind: 'action',
          action: { kind: 'tool_call', name: obj['tool'], arguments: args },
          trajectoryRepr: `${obj['tool']}(${JSON.stringify(args)})`,
          historyText,
        };
      }
      return { kind: 'invalid', explanation: 'Your reply had neither a "tool" string nor a "final" string.', historyText };
    },
  };
}

/** An {@link EventSink} that keeps every event. */
export type CollectingSink = EventSink & { readonly events: RunEvent[] };

/** Collect events in memory; `failOn` makes delivery of those event types throw (to test counting). */
export function collectingSink(opts: { readonly failOn?: readonly RunEvent['type'][] } = {}): CollectingSink {
  const events: RunEvent[] = [];
  const failOn = new Set(opts.failOn ?? []);
  return {
    params: Object.freeze({ sink: 'collecting' }),
    events,
    deliver(event: RunEvent): void {
      events.push(event);
      if (failOn.has(event.type)) throw new Error(`sink refuses ${event.type}`);
    },
  };
}

/** The error a {@link faultyStore} throws once it has "crashed". */
export class SimulatedCrashError extends Error {
  override readonly name = 'SimulatedCrashError';
}

/** The write methods of a store, in the names {@link faultyStore} counts. */
export type WriteMethod = 'runStarted' | 'intent' | 'result' | 'step' | 'runEnded';

/** A store that crashes on cue, and tells what it let through. */
export type FaultyStore = RunStore & {
  /** Writes that landed, in order. */
  readonly writes: { readonly method: WriteMethod; readonly runId: string }[];
  /** True once the crash point was reached. */
  readonly crashed: boolean;
};

/**
 * Wrap a store so that it "crashes" after `crashAfterWrites` writes: that many writes land, every
 * later write rejects with {@link SimulatedCrashError} without landing (as if the process died),
 * and the inner store keeps exactly the log a real crash would leave. `landsBeforeThrow: true`
 * makes the first failing write land and then reject — the "settled on disk but the promise never
 * resolved" case. Reads pass through; `acquire` is passed through when the inner store has it.
 */
export function faultyStore(inner: RunStore, opts: { readonly crashAfterWrites: number; readonly landsBeforeThrow?: boolean }): FaultyStore {
  const writes: { method: WriteMethod; runId: string }[] = [];
  let crashed = false;
  const write = async (method: WriteMethod, runId: string, doWrite: () => Promise<void>): Promise<void> => {
    if (crashed || writes.length >= opts.crashAfterWrites) {
      const first = !crashed;
      crashed = true;
      if (first && opts.landsBeforeThrow) await doWrite();
      throw new SimulatedCrashError(`simulated crash before ${method} (after ${opts.crashAfterWrites} writes)`);
    }
    await doWrite();
    writes.push({ method, runId });
  };
  const store: FaultyStore = {
    writes,
    get crashed() {
      return crashed;
    },
    runStarted: (runId: string, rec: RunStartedRecord) => write('runStarted', runId, () => inner.runStarted(runId, rec)),
    intent: (runId: string, rec: IntentRecord) => write('intent', runId, () => inner.intent(runId, rec)),
    result: (runId: string, resultId: string, rec: ResultRecord) => write('result', runId, () => inner.result(runId, resultId, rec)),
    step: (runId: string, rec: StepWriteRecord) => write('step', runId, () => inner.step(runId, rec)),
    runEnded: (runId: string, rec: RunEndedRecord) => write('runEnded', runId, () => inner.runEnded(runId, rec)),
    readLog: (runId: string, o?: ReadLogOptions): Promise<readonly LogRecord[]> => inner.readLog(runId, o),
  };
  if (inner.acquire) {
    const acquire = inner.acquire.bind(inner);
    return Object.assign(store, { acquire: (runId: string, o: { readonly signal?: AbortSignal }): Promise<ReleaseLease> => acquire(runId, o) });
  }
  return store;
}
