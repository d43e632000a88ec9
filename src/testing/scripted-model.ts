/**
 * A deterministic model for tests: replies from a script, remembers its calls.
 * @module
 */
import { checkOptionKeys } from '../core/internal-entry.ts';
import type { ModelCall, ModelCaller, ModelReply, SeamParams } from '../core/index.ts';
import type { OptionKeys } from '../core/internal-entry.ts';

/** One scripted reply: a full reply, or just its text. */
export type ScriptedReply = ModelReply | string;

/** A reply by call sequence (array) or as a function of the call (messages, callSeq, …). */
export type Script = readonly ScriptedReply[] | ((call: ModelCall) => ScriptedReply | Promise<ScriptedReply>);

/** A {@link ModelCaller} that replays a script, and remembers every call it received. */
export type ScriptedModel = ModelCaller & {
  /** Every call received, in order, with its messages copied as they were at the call. */
  readonly calls: ModelCall[];
};

/** Options of {@link scriptedModel}. */
type ScriptedModelOptions = { readonly model?: string; readonly delayMs?: number };
const KNOWN: OptionKeys<ScriptedModelOptions> = { model: true, delayMs: true };

/**
 * A deterministic model. Replies by `callSeq` from an array, or by a function of the call.
 * A call past the end of an array script rejects. `delayMs` makes each call take visible time
 * (and honours abort while waiting).
 *
 * @example
 * const model = scriptedModel(['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}']);
 */
export function scriptedModel(script: Script, opts: ScriptedModelOptions = {}): ScriptedModel {
  checkOptionKeys(opts, KNOWN, 'scriptedModel');
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
