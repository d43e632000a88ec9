/**
 * Tools: specs with their handlers, an immutable registry, and the executor derived from it.
 * Argument validation uses `@cfworker/json-schema` (draft 2020-12), which runs in workerd
 * without `eval`.
 * @module
 */
import { Validator } from '@cfworker/json-schema';
import { describeError, InvalidRequestError, isPolyLoopError } from './errors.ts';
import type { ActionExecutor, ExecuteContext } from './ports.ts';
import type {
  Action,
  ActionOutcome,
  JsonObject,
  ModelToolSchema,
  ReplayPolicy,
  ToolCatalog,
  ToolDescriptor,
  ValidationResult,
} from './types.ts';

/**
 * A tool's implementation: takes validated arguments, returns observation text only — so it can
 * neither forge environment completion nor dodge budget counting. Throw `ToolEnvironmentError`
 * to say the environment is broken; reject with `signal.reason` when aborted.
 */
export type ToolHandler = (args: JsonObject, ctx: { readonly signal: AbortSignal }) => Promise<string>;

/** One tool. New fields are only ever appended. */
export type ToolSpec = {
  readonly name: string;
  readonly description: string;
  /** A JSON Schema (draft 2020-12) for the arguments object. */
  readonly parameters: JsonObject;
  /** Default `'never'`: an in-flight call is not run again on resume. */
  readonly replayPolicy?: ReplayPolicy;
  /** Default false. True: running this tool successfully ends the run (`tool_completed`). */
  readonly completesRun?: boolean;
  readonly handler?: ToolHandler;
};

type Entry = { readonly descriptor: ToolDescriptor; readonly handler: ToolHandler | undefined; readonly validator: Validator };

const MAX_SCHEMA_ERRORS = 3;

/**
 * An immutable set of tools. Implements {@link ToolCatalog}, the view interpreters receive.
 *
 * @example
 * const tools = ToolRegistry.of([{ name: 'add', description: 'Adds', parameters: schema, replayPolicy: 'safe', handler }]);
 * const request = { ...rest, tools, executor: tools.executor() };
 */
export class ToolRegistry implements ToolCatalog {
  readonly #entries: ReadonlyMap<string, Entry>;

  private constructor(entries: ReadonlyMap<string, Entry>) {
    this.#entries = entries;
  }

  /** Build a registry. Throws `InvalidRequestError` on a duplicate or empty name or a non-object schema. */
  static of(specs: readonly ToolSpec[]): ToolRegistry {
    const entries = new Map<string, Entry>();
    for (const spec of specs) {
      if (typeof spec.name !== 'string' || spec.name === '') throw new InvalidRequestError('a tool needs a non-empty name');
      if (entries.has(spec.name)) throw new InvalidRequestError(`duplicate tool name ${JSON.stringify(spec.name)}`);
      if (typeof spec.parameters !== 'object' || spec.parameters === null || Array.isArray(spec.parameters)) {
        throw new InvalidRequestError(`tool ${JSON.stringify(spec.name)}: parameters must be a JSON Schema object`);
      }
      const descriptor: ToolDescriptor = Object.freeze({
        name: spec.name,
        description: spec.description,
        parameters: deepFreeze(structuredClone(spec.parameters)),
        replayPolicy: spec.replayPolicy ?? 'never',
        completesRun: spec.completesRun ?? false,
      });
      // The validator gets its own copy: it annotates the schema object it is given.
      const validator = new Validator(structuredClone(spec.parameters) as object, '2020-12', false);
      entries.set(spec.name, { descriptor, handler: spec.handler, validator });
    }
    return new ToolRegistry(entries);
  }

  /** Tool names in registration order. */
  names(): readonly string[] {
    return [...this.#entries.keys()];
  }

  /** A tool's descriptor (without its handler), or undefined. */
  get(name: string): ToolDescriptor | undefined {
    return this.#entries.get(name)?.descriptor;
  }

  /** Whether `action` is a call of a known tool with arguments that match its schema. */
  validate(action: Action): ValidationResult {
    if (action.kind !== 'tool_call') return { ok: false, message: 'the action is not a tool call' };
    const entry = this.#entries.get(action.name);
    if (!entry) {
      const known = this.names();
      const list = known.length === 0 ? 'no tools are available' : `known tools: ${known.join(', ')}`;
      return { ok: false, message: `unknown tool ${JSON.stringify(action.name)} (${list})` };
    }
    const args = action.arguments;
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return { ok: false, message: `arguments of ${JSON.stringify(action.name)} must be a JSON object` };
    }
    const result = entry.validator.validate(args);
    if (result.valid) return { ok: true };
    // Wrapper keywords only say "a sub-schema failed"; the leaves say which and why.
    const leaves = result.errors.filter((e) => !['properties', 'allOf', 'anyOf', 'oneOf', 'items', '$ref'].includes(e.keyword));
    const shown = (leaves.length > 0 ? leaves : result.errors).slice(0, MAX_SCHEMA_ERRORS);
    const detail = shown.map((e) => `${e.instanceLocation}: ${e.error}`).join('; ');
    return { ok: false, message: `arguments of ${JSON.stringify(action.name)} do not match its schema: ${detail}` };
  }

  /** `{ name, description, parameters }` per tool, in registration order, for the model. */
  modelSchemas(): readonly ModelToolSchema[] {
    return [...this.#entries.values()].map(({ descriptor: d }) => ({ name: d.name, description: d.description, parameters: d.parameters }));
  }

  /** A new registry with only `names` (original order); this one is unchanged. Throws on an unknown name. */
  restrictTo(names: readonly string[]): ToolRegistry {
    const wanted = new Set(names);
    for (const name of wanted) {
      if (!this.#entries.has(name)) throw new InvalidRequestError(`restrictTo: unknown tool ${JSON.stringify(name)}`);
    }
    return new ToolRegistry(new Map([...this.#entries].filter(([name]) => wanted.has(name))));
  }

  /** An executor that dispatches to the handlers. Throws at once if any tool lacks a handler. */
  executor(): RegistryExecutor {
    const missing = [...this.#entries.values()].filter((e) => e.handler === undefined).map((e) => e.descriptor.name);
    if (missing.length > 0) throw new InvalidRequestError(`executor(): no handler for tool(s) ${missing.join(', ')}`);
    return new RegistryExecutor(this, (name) => this.#entries.get(name)?.handler);
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function notExecuted(observation: string): ActionOutcome {
  return { status: 'not_executed', observation, observationIsSynthetic: true, envReportedCompletion: false, observationTruncatedChars: 0 };
}

function outcome(status: 'executed' | 'env_error', observation: string): ActionOutcome {
  return { status, observation, observationIsSynthetic: false, envReportedCompletion: false, observationTruncatedChars: 0 };
}

/** The executor derived from a {@link ToolRegistry} (a class, so `instanceof` works). */
export class RegistryExecutor implements ActionExecutor {
  /** The registry this executor was derived from. */
  readonly registry: ToolRegistry;
  readonly #handlerOf: (name: string) => ToolHandler | undefined;

  /** @internal Use `ToolRegistry.executor()`. */
  constructor(registry: ToolRegistry, handlerOf: (name: string) => ToolHandler | undefined) {
    this.registry = registry;
    this.#handlerOf = handlerOf;
  }

  /**
   * The replay policy of one action: the named tool's; `'safe'` for an action that names no
   * known tool or is not a tool call, since this executor runs nothing for it.
   */
  replayPolicyFor(action: Action): ReplayPolicy {
    return action.kind === 'tool_call' ? (this.registry.get(action.name)?.replayPolicy ?? 'safe') : 'safe';
  }

  /** Contract: see {@link ActionExecutor.execute}; the outcome table is SPEC §2. */
  async execute(action: Action, ctx: ExecuteContext): Promise<ActionOutcome> {
    return (await this.executeTracked(action, ctx)).outcome;
  }

  /**
   * `execute`, also telling whether the action completed the run: a `completesRun` tool whose
   * handler returned normally (a handler that threw is `executed` but completes nothing, §7).
   */
  async executeTracked(action: Action, ctx: ExecuteContext): Promise<{ readonly outcome: ActionOutcome; readonly completedRun: boolean }> {
    ctx.signal.throwIfAborted();
    if (action.kind !== 'tool_call') {
      return { outcome: notExecuted('Not executed: this executor runs tool calls only, and the action is not a tool call.'), completedRun: false };
    }
    const valid = this.registry.validate(action);
    if (!valid.ok) return { outcome: notExecuted(`Not executed: ${valid.message}.`), completedRun: false };
    const handler = this.#handlerOf(action.name) as ToolHandler;
    try {
      const text = await handler(action.arguments as JsonObject, { signal: ctx.signal });
      ctx.signal.throwIfAborted();
      const completedRun = this.registry.get(action.name)?.completesRun === true;
      return { outcome: outcome('executed', typeof text === 'string' ? text : String(text)), completedRun };
    } catch (e) {
      ctx.signal.throwIfAborted();
      // By code, not instanceof: a handler may come from another bundle of this library.
      if (isPolyLoopError(e, 'tool_environment')) return { outcome: outcome('env_error', e.message), completedRun: false };
      return { outcome: outcome('executed', describeError(e)), completedRun: false };
    }
  }
}
