/**
 * Checks of a definition and a request (SPEC §2, §7): every problem named with its path, never
 * a raw `TypeError` from a hostile value.
 * @module
 */
import { InvalidRequestError } from './errors.ts';
import { jsonProblem, MAX_JSON_DEPTH, messageProblem } from './internal/values.ts';
import type { AgentConfig, RunRequest } from './request.ts';
import { canonicalJson } from './serialization.ts';
import { RegistryExecutor, ToolRegistry } from './tools.ts';

// A declaration, not an arrow: only then does TypeScript narrow after `if (…) fail(…)`.
function fail(message: string): never {
  throw new InvalidRequestError(message);
}
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`);

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
  for (const seam of ['model', 'interpreter', 'events'] as const) checkSeamParams(config[seam].params, `defineAgent: ${seam}.params`);
  for (const key of ['notExecuted', 'envError'] as const) {
    const value: unknown = config.syntheticObservations[key];
    if (typeof value !== 'string') fail(`defineAgent: syntheticObservations.${key} must be a string, got ${kind(value)}`);
  }
}

/**
 * Seam params enter the identity snapshot, whose canonical JSON must not throw mid-run (a BigInt,
 * a cycle) and whose hash must not depend on live objects: SPEC §2 makes them flat primitives.
 */
function checkSeamParams(params: unknown, path: string): void {
  if (!isRecord(params)) fail(`${path} must be an object of strings, numbers, booleans and nulls, got ${kind(params)}`);
  const problem = jsonProblem(params, path);
  if (problem) fail(problem);
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === 'object' && value !== null) fail(`${path}.${key} must be a string, number, boolean or null, got ${Array.isArray(value) ? 'an array' : 'an object'}`);
  }
}

/** The longest delay `setTimeout` honours; a larger one overflows and fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

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
  const tokens = req.budget.maxTotalTokens;
  if (tokens !== undefined && (!Number.isSafeInteger(tokens) || tokens <= 0)) fail(`request.budget.maxTotalTokens must be a positive integer or absent, got ${JSON.stringify(tokens)}`);
  if (!(req.tools instanceof ToolRegistry)) fail('request.tools must be a ToolRegistry (ToolRegistry.of([]) for none)');
  if (!isRecord(req.executor) || typeof req.executor.execute !== 'function') fail('request.executor must be an ActionExecutor');
  // Absent and null both enter the snapshot as null.
  if (req.executor.params != null) checkSeamParams(req.executor.params, 'request.executor.params');
  const policy = req.executor.replayPolicy;
  if (policy !== undefined && policy !== 'safe' && policy !== 'never') fail(`request.executor.replayPolicy must be "safe", "never" or absent, got ${JSON.stringify(policy) ?? typeof policy}`);
  if (req.executor instanceof RegistryExecutor) checkExecutorMatches(req.executor, req.tools);
  checkContext(req.context);
  checkInjections(req.injections);
  checkBinding(req.modelBinding);
  if (req.modelReplayPolicy !== 'safe' && req.modelReplayPolicy !== 'never') fail('request.modelReplayPolicy must be "safe" or "never"');
  if (typeof req.observationTemplate !== 'string') fail('request.observationTemplate must be a string');
  if (!['none', 'json', 'markdown'].includes(req.toolRenderStyle)) fail('request.toolRenderStyle must be "none", "json" or "markdown"');
  const grace: unknown = req.cancelGraceMs;
  if (typeof grace !== 'number' || !(grace >= 0 && grace <= MAX_TIMER_MS)) fail(`request.cancelGraceMs must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${String(grace)}`);
}

/**
 * Every block is checked, not only every message: an unknown block or a non-string text measures
 * NaN and switches the context limit off, and anything JSON cannot hold (a BigInt, a cycle) makes
 * the snapshot's canonical JSON throw mid-run. The depth limit leaves room for the two levels
 * (record, snapshot) that wrap the context in the `run_started` record.
 */
function checkContext(context: RunRequest['context']): void {
  if (!isRecord(context)) fail('request.context must be an object with run and goal message arrays');
  for (const key of ['run', 'goal'] as const) {
    const messages: unknown = context[key];
    if (!Array.isArray(messages)) fail(`request.context.${key} must be an array of messages, got ${kind(messages)}`);
    for (let i = 0; i < (messages as unknown[]).length; i++) {
      const problem = messageProblem((messages as unknown[])[i], `request.context.${key}[${i}]`);
      if (problem) fail(problem);
    }
  }
  const problem = jsonProblem(context, 'request.context', MAX_JSON_DEPTH - 2);
  if (problem) fail(problem);
}

function checkInjections(injections: RunRequest['injections']): void {
  if (!isRecord(injections)) fail(`request.injections must be an object of channel → entries, got ${kind(injections)}`);
  const problem = jsonProblem(injections, 'request.injections');
  if (problem) fail(problem);
  for (const [channel, entries] of Object.entries(injections)) {
    const path = `request.injections.${channel}`;
    if (!Array.isArray(entries)) fail(`${path} must be an array of { name, text }, got ${kind(entries)}`);
    entries.forEach((entry: unknown, i) => {
      if (!isRecord(entry)) fail(`${path}[${i}] must be a { name, text } object, got ${kind(entry)}`);
      for (const key of ['name', 'text'] as const) {
        if (typeof entry[key] !== 'string') fail(`${path}[${i}].${key} must be a string, got ${kind(entry[key])}`);
      }
    });
  }
}

function checkBinding(binding: RunRequest['modelBinding']): void {
  if (!isRecord(binding)) fail(`request.modelBinding must map strings to strings, got ${kind(binding)}`);
  for (const [key, value] of Object.entries(binding)) {
    if (typeof value !== 'string') fail(`request.modelBinding.${key} must be a string, got ${kind(value)}`);
  }
  const problem = jsonProblem(binding, 'request.modelBinding');
  if (problem) fail(problem);
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
