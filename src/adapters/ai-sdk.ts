/**
 * `polyloop/adapters/ai-sdk` — any AI SDK language model (`LanguageModelV2`, `V3` or `V4`: OpenAI,
 * Anthropic, Google, Mistral, Bedrock, Groq, Ollama, OpenRouter, … providers) as a
 * {@link ModelCaller}, and the matching {@link aiSdkToolInterpreter}. The dependency on
 * `@ai-sdk/provider` is types only; nothing of `ai` is needed at run time.
 * @module
 */
import type { LanguageModelV2, LanguageModelV3 } from '@ai-sdk/provider';
import { canonicalJson, checkOptionKeys } from '../core/internal-entry.ts';
import type { DecisionInterpreter, JsonObject, ModelCall, ModelCaller, ModelReply } from '../core/index.ts';
import type { OptionKeys } from '../core/internal-entry.ts';
import { toAiSdkPrompt, toAiSdkTools } from './ai-sdk-prompt.ts';
import type { AiSdkFunctionTool, AiSdkPromptMessage, AiSdkProviderOptions } from './ai-sdk-prompt.ts';
import { replyOfTurn } from './ai-sdk-reply.ts';
import type { AiSdkTurn } from './ai-sdk-reply.ts';
import { gatherStream, ReplySize } from './ai-sdk-stream.ts';
import { nativeToolInterpreter } from './tool-interpreter.ts';

export type { AiSdkProviderOptions } from './ai-sdk-prompt.ts';
export { AiSdkResponseTooLargeError, AiSdkStreamError } from './ai-sdk-stream.ts';

/**
 * An AI SDK `LanguageModelV4` (`@ai-sdk/provider` 4.x) as far as this adapter uses it. Described
 * here rather than imported: the optional peer range takes provider 3.x too, which has no such
 * name, and these declarations must compile against either.
 */
export type AiSdkLanguageModelV4 = {
  readonly specificationVersion: 'v4';
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: AiSdkCallOptions): PromiseLike<unknown>;
  doStream(options: AiSdkCallOptions): PromiseLike<{ readonly stream: ReadableStream<unknown> }>;
};

/**
 * An AI SDK language model of any specification version this adapter reads: `LanguageModelV2` and
 * `V3` as the installed `@ai-sdk/provider` (3.x or 4.x) declares them, and a V4 model.
 */
export type AiSdkLanguageModel = LanguageModelV2 | LanguageModelV3 | AiSdkLanguageModelV4;

/** Call settings passed to every call as they are (they change the model's behaviour, so they are in `params`). */
export type AiSdkCallSettings = {
  readonly maxOutputTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly topK?: number;
  readonly presencePenalty?: number;
  readonly frequencyPenalty?: number;
  readonly seed?: number;
  readonly stopSequences?: readonly string[];
};

/** What a run's `modelBinding` adds to a call (see {@link AiSdkModelOptions.binding}). */
export type AiSdkBindingOptions = {
  readonly headers?: Readonly<Record<string, string>>;
  readonly providerOptions?: AiSdkProviderOptions;
};

/** Options of {@link aiSdkModel}. */
export type AiSdkModelOptions = {
  /**
   * Call `doStream` and report text deltas via `ModelCall.onDelta`, and `reasoning-delta` parts as
   * `'reasoning'`. Default false (`doGenerate`).
   */
  readonly stream?: boolean;
  /** Call settings for every call; reported in `params.settings`. */
  readonly settings?: AiSdkCallSettings;
  /**
   * Provider options, merged per provider over the adapter's own, which it sets whenever there are
   * tools: `openai.parallelToolCalls: false`, `anthropic.disableParallelToolUse: true` (one call per
   * turn, docs/design/conversation.md#native-tool-calls), or `true` and `false` when the run takes
   * several calls a step (`parallelToolCalls` above 1 on the request). Reported in
   * `params.providerOptions`.
   */
  readonly providerOptions?: AiSdkProviderOptions;
  /** Extra request headers of every call (not reported in `params`: they may hold secrets). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Where `modelBinding` goes. AI SDK models have no common field for it, so by default it is not
   * sent; map it to headers or provider options here (e.g. `(b) => ({ providerOptions: {
   * anthropic: { metadata: { userId: b.user_id } } } })`). Never into the prompt.
   */
  readonly binding?: (binding: Readonly<Record<string, string>>) => AiSdkBindingOptions;
  /**
   * The most a reply may deliver before the call fails with `AiSdkResponseTooLargeError` (the run
   * ends `model_error`) and the stream is cancelled. An AI SDK model hands over parts, not bytes:
   * what counts is the text, reasoning and tool input (streamed deltas, tool calls, a generate
   * result's parts) in UTF-8 bytes. Default 32 MiB (33 554 432). Not part of `params`.
   */
  readonly maxResponseBytes?: number;
};

/** Default of {@link AiSdkModelOptions.maxResponseBytes}: 32 MiB, as the other adapters. */
const DEFAULT_MAX_RESPONSE_BYTES = 33_554_432;

const VERSIONS = new Set(['v2', 'v3', 'v4']);

const AI_SDK_OPTIONS: OptionKeys<AiSdkModelOptions> = {
  stream: true,
  settings: true,
  providerOptions: true,
  headers: true,
  binding: true,
  maxResponseBytes: true,
};
const SETTINGS: OptionKeys<AiSdkCallSettings> = {
  maxOutputTokens: true,
  temperature: true,
  topP: true,
  topK: true,
  presencePenalty: true,
  frequencyPenalty: true,
  seed: true,
  stopSequences: true,
};
/** A call setting given beside the options belongs in `settings`. */
const SETTINGS_HINTS = Object.fromEntries(
  Object.keys(SETTINGS).map((k) => [k, `a call setting goes in \`settings\` (\`settings: { ${k}: … }\`)`]),
);

/** Refuses a key that is not an option of `where` (or of its `settings`), naming the nearest one. */
function checkOptions(options: AiSdkModelOptions, where: string): void {
  checkOptionKeys(options, AI_SDK_OPTIONS, where, { hints: SETTINGS_HINTS });
  if (options.settings === undefined) return;
  checkOptionKeys(options.settings, SETTINGS, `${where} settings`, {
    hints: { maxTokens: 'did you mean `maxOutputTokens`?' },
  });
}

/** The call options every specification version accepts (the type test checks each). */
export type AiSdkCallOptions = Omit<AiSdkCallSettings, 'stopSequences'> & {
  stopSequences?: string[];
  prompt: AiSdkPromptMessage[];
  tools?: AiSdkFunctionTool[];
  providerOptions: AiSdkProviderOptions;
  headers?: Record<string, string>;
  abortSignal: AbortSignal;
};

/** One call per turn, asked of the providers that take the option. */
const ONE_CALL_PER_TURN: AiSdkProviderOptions = {
  openai: { parallelToolCalls: false },
  anthropic: { disableParallelToolUse: true },
};

/** Several calls per turn (a run whose `parallelToolCalls` is above 1): the same options, allowing them. */
const SEVERAL_CALLS_PER_TURN: AiSdkProviderOptions = {
  openai: { parallelToolCalls: true },
  anthropic: { disableParallelToolUse: false },
};

function mergeProviderOptions(...layers: (AiSdkProviderOptions | undefined)[]): AiSdkProviderOptions {
  const out: AiSdkProviderOptions = {};
  for (const layer of layers)
    for (const [key, value] of Object.entries(layer ?? {})) out[key] = { ...out[key], ...value };
  return out;
}

/**
 * Build the call options of one model call. Exported so tests can check them against every
 * specification version's `CallOptions` type.
 */
export function aiSdkCallOptions(call: ModelCall, provider: string, options: AiSdkModelOptions = {}): AiSdkCallOptions {
  checkOptions(options, 'aiSdkCallOptions');
  const bound = options.binding?.(call.binding) ?? {};
  const headers = { ...options.headers, ...bound.headers };
  const hasTools = call.tools.length > 0;
  const { stopSequences, ...settings } = options.settings ?? {};
  return {
    ...settings,
    ...(stopSequences ? { stopSequences: [...stopSequences] } : {}),
    prompt: toAiSdkPrompt(call.messages, provider),
    ...(hasTools ? { tools: toAiSdkTools(call.tools) } : {}),
    providerOptions: mergeProviderOptions(
      hasTools ? ((call.parallelToolCalls ?? 1) > 1 ? SEVERAL_CALLS_PER_TURN : ONE_CALL_PER_TURN) : undefined,
      options.providerOptions,
      bound.providerOptions,
    ),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    abortSignal: call.signal,
  };
}

function jsonParam(v: object | undefined): string | null {
  return v === undefined ? null : canonicalJson(v as JsonObject);
}

type Callable = {
  doGenerate(o: AiSdkCallOptions): PromiseLike<Record<string, unknown>>;
  doStream(o: AiSdkCallOptions): PromiseLike<{ stream: ReadableStream<unknown> }>;
};

async function generate(model: Callable, opts: AiSdkCallOptions, size: ReplySize): Promise<AiSdkTurn> {
  const r = await model.doGenerate(opts);
  const response = r['response'] as { id?: unknown } | undefined;
  if (!Array.isArray(r['content']))
    throw new TypeError('aiSdkModel: doGenerate returned a result without a content array');
  for (const part of r['content'] as unknown[]) {
    if (typeof part === 'object' && part !== null) size.add(part as Record<string, unknown>);
  }
  return {
    content: r['content'],
    finishReason: r['finishReason'],
    usage: r['usage'],
    providerMetadata: r['providerMetadata'],
    responseId: response?.id,
  };
}

/**
 * A model caller for any AI SDK language model object, detected by its `specificationVersion`
 * (`v2`, `v3`, `v4`; anything else throws a `TypeError`). `params` reports `{ adapter: 'ai-sdk',
 * provider, model: 'provider:modelId', specificationVersion, stream, settings, providerOptions,
 * binding }`. The provider's own errors (e.g. `APICallError`) are rethrown as they are; abort
 * rejects with `signal.reason`; no retries (the provider's `fetch` option is the place for them).
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * const model = aiSdkModel(openai.chat('gpt-4.1-mini'));
 * const agent = defineAgent({ model, interpreter: aiSdkToolInterpreter(), store, events, syntheticObservations });
 */
export function aiSdkModel(model: AiSdkLanguageModel, options: AiSdkModelOptions = {}): ModelCaller {
  checkOptions(options, 'aiSdkModel');
  const version: unknown = (model as { specificationVersion?: unknown } | null)?.specificationVersion;
  if (typeof version !== 'string' || !VERSIONS.has(version)) {
    throw new TypeError(
      `aiSdkModel: specificationVersion ${JSON.stringify(version) ?? String(version)} is not supported (v2, v3 or v4)`,
    );
  }
  if (typeof model.provider !== 'string' || typeof model.modelId !== 'string' || model.modelId === '') {
    throw new TypeError('aiSdkModel: the model needs a provider and a non-empty modelId');
  }
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!Number.isSafeInteger(maxResponseBytes) || maxResponseBytes < 1) {
    const got = JSON.stringify(options.maxResponseBytes);
    throw new TypeError(`aiSdkModel: maxResponseBytes must be a positive integer, got ${got}`);
  }
  const provider = model.provider;
  const callable = model as unknown as Callable;
  const params = Object.freeze({
    adapter: 'ai-sdk',
    provider,
    model: `${provider}:${model.modelId}`,
    specificationVersion: version,
    stream: options.stream ?? false,
    settings: jsonParam(options.settings),
    providerOptions: jsonParam(options.providerOptions),
    binding: options.binding ? 'custom' : 'none',
  });
  return {
    params,
    async call(call: ModelCall): Promise<ModelReply> {
      call.signal.throwIfAborted();
      const opts = aiSdkCallOptions(call, provider, options);
      try {
        const size = new ReplySize(maxResponseBytes);
        const turn = options.stream
          ? await gatherStream((await callable.doStream(opts)).stream, call.signal, size, call.onDelta)
          : await generate(callable, opts, size);
        call.signal.throwIfAborted();
        return replyOfTurn(turn, provider);
      } catch (e) {
        // Providers reject an aborted call with their own error; the loop expects the reason itself.
        if (call.signal.aborted) throw call.signal.reason;
        throw e;
      }
    },
  };
}

/**
 * The interpreter matching {@link aiSdkModel}: one tool call → `action` (with the call's id);
 * several → one `actions` decision when the run takes several calls a step (`parallelToolCalls`
 * above 1), else `invalid`; text only → `final`; bad arguments, an unknown tool, an empty reply or
 * a reply cut off at the token limit (`finishReason: 'length'`) → `invalid` with an explanation.
 */
export function aiSdkToolInterpreter(): DecisionInterpreter {
  const inner = nativeToolInterpreter('ai-sdk-tools');
  return {
    params: inner.params,
    interpret(reply, ctx) {
      const decision = inner.interpret(reply, ctx);
      if (reply.finishReason !== 'length' || decision.kind === 'invalid') return decision;
      // A cut-off reply is never an answer, nor a call whose arguments may be cut short.
      const { historyText, historyContent } = decision;
      return { kind: 'invalid', explanation: CUT_OFF, historyText, ...(historyContent ? { historyContent } : {}) };
    },
  };
}

const CUT_OFF =
  'Your reply was cut off: it reached the output token limit before it ended, so it was not taken as your answer ' +
  'and no tool ran. Reply again, more briefly: give your final answer, or make one tool call.';
