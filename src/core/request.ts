/**
 * The definition and request types, their checks, and the parameter snapshot a run's identity is
 * made of (SPEC §2, §7).
 * @module
 */
import { InvalidRequestError } from './errors.ts';
import type { ActionExecutor, DecisionInterpreter, EventSink, ModelCaller, RunStore } from './ports.ts';
import { canonicalJson } from './serialization.ts';
import { RegistryExecutor, ToolRegistry } from './tools.ts';
import type { Budget, JsonValue, Message, ReplayPolicy, SeamParams, SkillEntry, ToolRenderStyle } from './types.ts';

/** The text history shows in place of an observation the model must not depend on. */
export type SyntheticObservations = {
  /** For an action that was not executed (unknown tool, bad arguments, wrong action kind). */
  readonly notExecuted: string;
  /** For an action whose environment failed. */
  readonly envError: string;
};

/** What {@link defineAgent} takes. Every field is required; there is no default store. */
export type AgentConfig = {
  readonly model: ModelCaller;
  readonly interpreter: DecisionInterpreter;
  readonly store: RunStore;
  readonly events: EventSink;
  readonly syntheticObservations: SyntheticObservations;
};

/** `agent.params`: every seam's params plus the synthetic texts. */
export type AgentParams = {
  readonly model: SeamParams;
  readonly interpreter: SeamParams;
  readonly events: SeamParams;
  readonly syntheticObservations: SyntheticObservations;
};

/** A frozen, reusable agent definition. */
export type AgentDefinition = AgentConfig & { readonly params: AgentParams };

/** One run's request. Every field is required; none has a default. Cheap to build: no I/O, no hashing. */
export type RunRequest = {
  readonly runId: string;
  readonly budget: Budget;
  readonly executor: ActionExecutor;
  readonly tools: ToolRegistry;
  readonly context: { readonly run: readonly Message[]; readonly goal: readonly Message[] };
  readonly injections: Readonly<Record<string, readonly SkillEntry[]>>;
  readonly modelBinding: Readonly<Record<string, string>>;
  readonly modelReplayPolicy: ReplayPolicy;
  readonly observationTemplate: string;
  readonly toolRenderStyle: ToolRenderStyle;
  readonly cancelGraceMs: number;
};

/** Options of `run` and `resume`. */
export type RunOptions = { readonly signal?: AbortSignal };

const fail = (message: string): never => {
  throw new InvalidRequestError(message);
};
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Throws `InvalidRequestError` naming the first missing or malformed field. */
export function checkAgentConfig(config: AgentConfig): void {
  if (!isRecord(config)) fail('defineAgent needs a config object');
  for (const key of ['model', 'interpreter', 'store', 'events', 'syntheticObservations'] as const) {
    if (!isRecord(config[key])) fail(`defineAgent: ${key} is required`);
  }
  if (typeof config.model.call !== 'function') fail('defineAgent: model.call must be a function');
  if (typeof config.interpreter.interpret !== 'function') fail('defineAgent: interpreter.interpret must be a function');
  if (typeof config.events.deliver !== 'function') fail('defineAgent: events.deliver must be a function');
  for (const m of ['runStarted', 'intent', 'result', 'step', 'readLog', 'runEnded'] as const) {
    if (typeof config.store[m] !== 'function') fail(`defineAgent: store.${m} must be a function`);
  }
  if (!isRecord(config.model.params) || typeof config.model.params['model'] !== 'string') fail('defineAgent: model.params.model must be a string naming the model');
  if (!isRecord(config.interpreter.params)) fail('defineAgent: interpreter.params is required');
  if (!isRecord(config.events.params)) fail('defineAgent: events.params is required');
  const s = config.syntheticObservations;
  if (typeof s.notExecuted !== 'string' || typeof s.envError !== 'string') fail('defineAgent: syntheticObservations needs notExecuted and envError strings');
}

/**
 * Throws `InvalidRequestError` naming the first missing or malformed field of a request — the
 * check `run` and `resume` make before anything else. Exported (as `validateRunRequest`) for
 * hosts that build requests from untrusted input and want to refuse them before storing anything.
 *
 * @example
 * try { validateRunRequest(request); } catch (e) { if (isPolyLoopError(e, 'invalid_request')) return badRequest(e.message); throw e; }
 */
export function checkRequest(req: RunRequest): void {
  if (!isRecord(req)) fail('a run request must be an object');
  if (typeof req.runId !== 'string') fail('request.runId must be a string');
  if (!isRecord(req.budget)) fail('request.budget is required');
  for (const key of ['maxSteps', 'maxValidActions', 'maxContextChars'] as const) {
    const n = req.budget[key];
    if (!Number.isSafeInteger(n) || n <= 0) fail(`request.budget.${key} must be a positive integer, got ${JSON.stringify(n)}`);
  }
  if (!(req.tools instanceof ToolRegistry)) fail('request.tools must be a ToolRegistry (ToolRegistry.of([]) for none)');
  if (!isRecord(req.executor) || typeof req.executor.execute !== 'function') fail('request.executor must be an ActionExecutor');
  if (req.executor instanceof RegistryExecutor) checkExecutorMatches(req.executor, req.tools);
  if (!isRecord(req.context) || !Array.isArray(req.context.run) || !Array.isArray(req.context.goal)) fail('request.context needs run and goal message arrays');
  checkMessages([...req.context.run, ...req.context.goal]);
  if (!isRecord(req.injections)) fail('request.injections must be an object of channel → entries');
  for (const [channel, entries] of Object.entries(req.injections)) {
    if (!Array.isArray(entries) || !entries.every((e) => isRecord(e) && typeof e.name === 'string' && typeof e.text === 'string')) {
      fail(`request.injections.${channel} must be an array of { name, text }`);
    }
  }
  if (!isRecord(req.modelBinding) || !Object.values(req.modelBinding).every((v) => typeof v === 'string')) fail('request.modelBinding must map strings to strings');
  if (req.modelReplayPolicy !== 'safe' && req.modelReplayPolicy !== 'never') fail('request.modelReplayPolicy must be "safe" or "never"');
  if (typeof req.observationTemplate !== 'string') fail('request.observationTemplate must be a string');
  if (!['none', 'json', 'markdown'].includes(req.toolRenderStyle)) fail('request.toolRenderStyle must be "none", "json" or "markdown"');
  if (typeof req.cancelGraceMs !== 'number' || !(req.cancelGraceMs >= 0) || !Number.isFinite(req.cancelGraceMs)) fail('request.cancelGraceMs must be a non-negative number');
}

function checkMessages(messages: readonly Message[]): void {
  for (const m of messages) {
    if (!isRecord(m) || !['system', 'user', 'assistant'].includes(m.role) || !Array.isArray(m.content)) {
      fail('request.context messages need a role (system, user, assistant) and a content array');
    }
  }
}

/**
 * A registry executor must run exactly the tools the model sees (decision 0003): one derived from
 * a wider registry would run tools hidden from this run, a narrower one would refuse visible
 * ones, and one with other schemas or replay policies would enforce what the model was not told
 * and the run's identity does not record.
 */
function checkExecutorMatches(executor: RegistryExecutor, tools: ToolRegistry): void {
  if (executor.registry === tools) return;
  const own = new Set(executor.registry.names());
  const visible = new Set(tools.names());
  const extra = [...own].filter((n) => !visible.has(n));
  const missing = [...visible].filter((n) => !own.has(n));
  if (extra.length + missing.length > 0) {
    fail(`request.executor was derived from a different registry than request.tools (only in executor: ${extra.join(', ') || '-'}; only in tools: ${missing.join(', ') || '-'})`);
  }
  const differing = [...visible].filter((n) => {
    const a = executor.registry.get(n);
    const b = tools.get(n);
    return a !== b && canonicalJson(a) !== canonicalJson(b);
  });
  if (differing.length > 0) fail(`request.executor's registry describes tools differently from request.tools: ${differing.join(', ')}`);
}

/**
 * The parameter snapshot (SPEC §7): model, interpreter and executor params, synthetic texts, and
 * the request's budget, tools, context, injections, binding, replay policy, template and render
 * style. Not in it: runId, cancelGraceMs, the store, the event sink.
 */
export function buildSnapshot(agent: AgentDefinition, req: RunRequest): Record<string, unknown> {
  return {
    model: agent.model.params,
    interpreter: agent.interpreter.params,
    executor: req.executor.params ?? null,
    syntheticObservations: agent.syntheticObservations,
    budget: { maxSteps: req.budget.maxSteps, maxValidActions: req.budget.maxValidActions, maxContextChars: req.budget.maxContextChars },
    tools: req.tools.names().map((name) => req.tools.get(name) as unknown as JsonValue),
    context: req.context,
    injections: req.injections,
    modelBinding: req.modelBinding,
    modelReplayPolicy: req.modelReplayPolicy,
    observationTemplate: req.observationTemplate,
    toolRenderStyle: req.toolRenderStyle,
  };
}

/** Hex SHA-256 of a string, via `crypto.subtle`. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
