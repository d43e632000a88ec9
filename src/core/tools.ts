/**
 * Tools: specs with their handlers, an immutable registry, and the executor derived from it.
 * Arguments are checked by the tool's own validator (a Standard Schema, `argumentsSchema`) or
 * against its JSON Schema `parameters` (`tool-arguments.ts`, and `json-schema-tools.ts` it loads:
 * `@cfworker/json-schema`, draft 2020-12, which runs in workerd without `eval`, its regular
 * expressions matched in linear time).
 * @module
 */
import { childRunnerOf, NO_CHILD_CALL } from './child-runs.ts';
import type { ChildCall, ChildOutcome } from './child-runs.ts';
import { describeError, InvalidRequestError, isPolyLoopError } from './errors.ts';
import type { ArgumentsCheck } from './json-schema-tools.ts';
import { MAX_ARGUMENTS_DEPTH, plainJsonProblem } from './plain-json.ts';
import { argumentsCheckOf, loadJsonSchema } from './tool-arguments.ts';
import type { Compile } from './tool-arguments.ts';
import { checkSpec, describeKind, freezeSchema } from './tool-spec.ts';
import type { ToolHandler, ToolSpec } from './tool-spec.ts';
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

export type { StandardResult, StandardSchemaV1, ToolContext, ToolHandler, ToolSpec } from './tool-spec.ts';

type Entry = {
  readonly descriptor: ToolDescriptor;
  readonly handler: ToolHandler | undefined;
  readonly check: ArgumentsCheck;
};

const MAX_SCHEMA_ERRORS = 3;

const READY: Promise<void> = Promise.resolve();

/** An action that calls a tool. */
type ToolCallAction = Extract<Action, { readonly kind: 'tool_call' }>;

/** The answer for arguments that validate (one frozen object: this runs every step). */
const VALID: ValidationResult = Object.freeze({ ok: true });

/**
 * An immutable set of tools. Implements {@link ToolCatalog}, the view interpreters receive.
 *
 * @example
 * const add = { name: 'add', description: 'Adds', parameters: schema, replayPolicy: 'safe', handler };
 * const tools = ToolRegistry.of([add]);
 * const request = { ...rest, tools, executor: tools.executor() };
 */
export class ToolRegistry implements ToolCatalog {
  readonly #entries: ReadonlyMap<string, Entry>;
  readonly #loaded: Promise<void>;

  private constructor(entries: ReadonlyMap<string, Entry>, loaded: Promise<void>) {
    this.#entries = entries;
    this.#loaded = loaded;
  }

  /**
   * Build a registry. Throws `InvalidRequestError`, naming the tool, on a duplicate or empty name,
   * a field of the wrong kind, or a parameter schema the validator could not apply:
   * refused here rather than failing in the middle of a run. The JSON Schema validator loads on
   * demand: until it has arrived, a schema it must check is refused by {@link loaded} (and so by
   * the run's start) instead, and its tool's arguments cannot be checked.
   */
  static of(specs: readonly ToolSpec[]): ToolRegistry {
    if (!Array.isArray(specs)) throw new InvalidRequestError('ToolRegistry.of needs an array of tool specs');
    const entries = new Map<string, Entry>();
    const later: Compile[] = [];
    for (const spec of specs as readonly unknown[]) {
      const checked = checkSpec(spec);
      if (entries.has(checked.name))
        throw new InvalidRequestError(`duplicate tool name ${JSON.stringify(checked.name)}`);
      // First: the schema check also refuses what would make the copy below recurse forever (a cycle).
      const check = argumentsCheckOf(checked, later);
      const descriptor: ToolDescriptor = Object.freeze({
        name: checked.name,
        description: checked.description,
        parameters: freezeSchema(structuredClone(checked.parameters)),
        replayPolicy: checked.replayPolicy ?? 'never',
        completesRun: checked.completesRun ?? false,
        needsApproval: checked.needsApproval ?? false,
        answeredBy: checked.answeredBy ?? null,
      });
      entries.set(checked.name, { descriptor, handler: checked.handler, check });
    }
    if (later.length === 0) return new ToolRegistry(entries, READY);
    const loaded = loadJsonSchema().then((m) => {
      for (const compile of later) compile(m);
    });
    // Kept for loaded() and the run that awaits it; a registry nobody runs must not report it unhandled.
    loaded.catch(() => undefined);
    return new ToolRegistry(entries, loaded);
  }

  /**
   * Resolves when every tool's arguments can be checked: at once unless `of` ran before the JSON
   * Schema validator arrived. Contract: rejects with the `InvalidRequestError` `of` refuses a schema
   * with once it has loaded (or the module's load error); `run` and `resume` await it first.
   */
  loaded(): Promise<void> {
    return this.#loaded;
  }

  /** Tool names in registration order. */
  names(): readonly string[] {
    return [...this.#entries.keys()];
  }

  /** A tool's descriptor (without its handler), or undefined. */
  get(name: string): ToolDescriptor | undefined {
    return this.#entries.get(name)?.descriptor;
  }

  /**
   * Whether `action` is a call of a known tool with arguments that match its schema. Never
   * throws: arguments JSON cannot hold (a BigInt, a cycle, nesting past the storable depth) are
   * a mismatch like any other, and so is whatever else the validator might throw on. The message
   * names at most `maxProblems` schema problems (3 unless asked for more).
   */
  validate(action: Action, maxProblems = MAX_SCHEMA_ERRORS): ValidationResult {
    if (typeof action !== 'object' || action === null || action.kind !== 'tool_call')
      return { ok: false, message: 'the action is not a tool call' };
    const entry = this.#entries.get(action.name);
    if (!entry) {
      const known = this.names();
      const list = known.length === 0 ? 'no tools are available' : `known tools: ${known.join(', ')}`;
      return { ok: false, message: `unknown tool ${JSON.stringify(action.name)} (${list})` };
    }
    const args: unknown = action.arguments;
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return { ok: false, message: `arguments of ${JSON.stringify(action.name)} must be a JSON object` };
    }
    const problem = plainJsonProblem(args, 'arguments', MAX_ARGUMENTS_DEPTH);
    if (problem)
      return { ok: false, message: `arguments of ${JSON.stringify(action.name)} are not plain JSON: ${problem}` };
    let detail: string | null;
    try {
      detail = entry.check(args, maxProblems);
    } catch (e) {
      return {
        ok: false,
        message:
          `arguments of ${JSON.stringify(action.name)} could not be checked against its schema ` +
          `(${describeError(e)})`,
      };
    }
    if (detail === null) return VALID;
    return { ok: false, message: `arguments of ${JSON.stringify(action.name)} do not match its schema: ${detail}` };
  }

  /** `{ name, description, parameters }` per tool, in registration order, for the model. */
  modelSchemas(): readonly ModelToolSchema[] {
    return [...this.#entries.values()].map(({ descriptor: d }) => ({
      name: d.name,
      description: d.description,
      parameters: d.parameters,
    }));
  }

  /** A new registry with only `names` (original order); this one is unchanged. Throws on an unknown name. */
  restrictTo(names: readonly string[]): ToolRegistry {
    const wanted = new Set(names);
    for (const name of wanted) {
      if (!this.#entries.has(name)) throw new InvalidRequestError(`restrictTo: unknown tool ${JSON.stringify(name)}`);
    }
    return new ToolRegistry(new Map([...this.#entries].filter(([name]) => wanted.has(name))), this.#loaded);
  }

  /**
   * An executor that dispatches to the handlers. Throws at once
   * if a tool lacks one (a tool answered by a person needs none).
   */
  executor(): RegistryExecutor {
    return new RegistryExecutor(this, (name) => this.#entries.get(name)?.handler);
  }
}

function notExecuted(observation: string): ActionOutcome {
  return {
    status: 'not_executed',
    observation,
    observationIsSynthetic: true,
    envReportedCompletion: false,
    observationTruncatedChars: 0,
  };
}

function outcome(status: 'executed' | 'env_error', observation: string): ActionOutcome {
  return {
    status,
    observation,
    observationIsSynthetic: false,
    envReportedCompletion: false,
    observationTruncatedChars: 0,
  };
}

/** What an executed action gave, and whether it completed the run; a sub-agent's call also how its child stands. */
export type Tracked = {
  readonly outcome: ActionOutcome;
  readonly completedRun: boolean;
  readonly child?: ChildOutcome;
};

/** The executor derived from a {@link ToolRegistry} (a class, so `instanceof` works). */
export class RegistryExecutor implements ActionExecutor {
  /** The registry this executor was derived from. */
  readonly registry: ToolRegistry;
  readonly #handlers: ReadonlyMap<string, ToolHandler>;

  /**
   * Prefer `ToolRegistry.executor()`. Built directly, it makes the same check: every tool of
   * `registry` needs a handler from `handlerOf`, looked up once, here — so a run can never meet a
   * missing handler, whatever the lookup answers later.
   */
  constructor(registry: ToolRegistry, handlerOf: (name: string) => ToolHandler | undefined) {
    if (!(registry instanceof ToolRegistry)) throw new InvalidRequestError('RegistryExecutor needs a ToolRegistry');
    if (typeof handlerOf !== 'function')
      throw new InvalidRequestError('RegistryExecutor needs a function that gives each tool its handler');
    const handlers = new Map<string, ToolHandler>();
    for (const name of registry.names()) {
      const handler = handlerOf(name);
      if (typeof handler === 'function') handlers.set(name, handler);
    }
    const missing = registry
      .names()
      .filter((name) => !handlers.has(name) && registry.get(name)?.answeredBy !== 'human');
    if (missing.length > 0) throw new InvalidRequestError(`executor(): no handler for tool(s) ${missing.join(', ')}`);
    this.registry = registry;
    this.#handlers = handlers;
  }

  /**
   * The replay policy of one action: the named tool's; `'safe'` for an action that names no
   * known tool or is not a tool call, since this executor runs nothing for it.
   */
  replayPolicyFor(action: Action): ReplayPolicy {
    return action.kind === 'tool_call' ? (this.registry.get(action.name)?.replayPolicy ?? 'safe') : 'safe';
  }

  /** Contract: see {@link ActionExecutor.execute}; the outcomes are in docs/api.md#tools. */
  async execute(action: Action, ctx: ExecuteContext): Promise<ActionOutcome> {
    return (await this.executeTracked(action, ctx)).outcome;
  }

  /** Whether `action` calls a sub-agent's tool (`agentTool`): the loop then waits for its child's end on a cancel. */
  runsChild(action: Action): boolean {
    return action.kind === 'tool_call' && childRunnerOf(this.#handlers.get(action.name)) !== undefined;
  }

  /**
   * `execute`, also telling whether the action completed the run: a `completesRun` tool whose
   * handler returned normally (a handler that threw is `executed` but completes nothing). A
   * sub-agent's call also tells how its child stands (`child`); `call` is what the parent carries
   * to that child: a person's reply, a deploy's upgrade.
   */
  executeTracked(action: Action, ctx: ExecuteContext, call: ChildCall = NO_CHILD_CALL): Promise<Tracked> {
    // Not an async function: the handler's answer goes on in its promise's `then`, a suspended
    // async layer less every step (a thrown error rejects as an async function's would).
    try {
      ctx.signal.throwIfAborted();
      if (action.kind !== 'tool_call') {
        return Promise.resolve({
          outcome: notExecuted('Not executed: this executor runs tool calls only, and the action is not a tool call.'),
          completedRun: false,
        });
      }
      const valid = this.registry.validate(action);
      // A validator's message may end a sentence of its own: one full stop, not two.
      if (!valid.ok)
        return Promise.resolve({
          outcome: notExecuted(`Not executed: ${valid.message.replace(/\.$/, '')}.`),
          completedRun: false,
        });
      const handler = this.#handlers.get(action.name);
      // The loop asks a person instead; reached only when this executor is called directly.
      if (!handler)
        return Promise.resolve({
          outcome: notExecuted(`Not executed: ${JSON.stringify(action.name)} is answered by a person, not run.`),
          completedRun: false,
        });
      const runner = childRunnerOf(handler);
      if (runner) return this.#runChild(runner, action, ctx, call);
      let answer: Promise<unknown>;
      try {
        // `Promise.resolve` inside the try: what the handler returned is read here, as `await` reads it.
        answer = Promise.resolve(
          handler(action.arguments as JsonObject, {
            signal: ctx.signal,
            runId: ctx.runId,
            stepIndex: ctx.stepIndex,
            resultId: ctx.resultId,
          }),
        );
      } catch (e) {
        return Promise.resolve(this.#threw(ctx, e));
      }
      return answer.then(
        (text) => this.#returned(action, ctx, text),
        (e: unknown) => this.#threw(ctx, e),
      );
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** A sub-agent's call: its child run, and how it stands. */
  async #runChild(
    runner: NonNullable<ReturnType<typeof childRunnerOf>>,
    action: ToolCallAction,
    ctx: ExecuteContext,
    call: ChildCall,
  ): Promise<Tracked> {
    const { signal, runId, stepIndex, resultId } = ctx;
    const child = await runner(action.arguments as JsonObject, { signal, runId, stepIndex, resultId, ...call });
    ctx.signal.throwIfAborted();
    if (child.kind === 'paused')
      return { outcome: notExecuted('The sub-agent awaits input.'), completedRun: false, child };
    const completedRun = this.registry.get(action.name)?.completesRun === true;
    return { outcome: outcome('executed', child.observation), completedRun, child };
  }

  /** What a handler returned: a string, or it broke its contract and counts as having thrown. */
  #returned(action: ToolCallAction, ctx: ExecuteContext, text: unknown): Tracked {
    try {
      ctx.signal.throwIfAborted();
      // A handler that broke its contract is treated as one that threw: the
      // model learns what happened, and a completesRun tool completes nothing.
      if (typeof text !== 'string')
        throw new TypeError(`handler of ${JSON.stringify(action.name)} returned ${describeKind(text)}, not a string`);
      const completedRun = this.registry.get(action.name)?.completesRun === true;
      return { outcome: outcome('executed', text), completedRun };
    } catch (e) {
      return this.#threw(ctx, e);
    }
  }

  /** A handler that threw (or rejected): its error is the observation; an abort throws on. */
  #threw(ctx: ExecuteContext, e: unknown): Tracked {
    ctx.signal.throwIfAborted();
    // By code, not instanceof: a handler may come from another bundle of this library.
    if (isPolyLoopError(e, 'tool_environment'))
      return { outcome: outcome('env_error', e.message), completedRun: false };
    return { outcome: outcome('executed', describeError(e)), completedRun: false };
  }
}
