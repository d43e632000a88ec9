/**
 * Checks of a definition and a request (docs/api.md#runrequest, docs/api.md#options-are-checked): every
 * problem named with its path, never a raw `TypeError` from a hostile value.
 * @module
 */
import { InvalidRequestError } from './errors.ts';
import type { RequestProblem } from './errors.ts';
import { jsonProblem, MAX_JSON_DEPTH, messageProblem } from './internal/values.ts';
import { unknownKeyProblems } from './options.ts';
import type { OptionKeys } from './options.ts';
import type { AgentConfig, AgentDefaults, AgentDefinition, RunRequest, SyntheticObservations } from './request.ts';
import { resolveRequest } from './request-input.ts';
import type { ResolvedRequest } from './request-input.ts';
import type { SkillEntry } from './types.ts';
import { canonicalJson } from './serialization.ts';
import { RegistryExecutor, ToolRegistry } from './tools.ts';

/**
 * Problems found so far. Each check reports what it finds and goes on, so one error names every
 * problem; a check skips only what depends on a value already reported (no `budget`, no limits).
 */
class Problems {
  readonly list: RequestProblem[] = [];
  /** `sentence` is `<path> <message>`, as the checks have always worded it. */
  add(path: string, sentence: string): void {
    const message = sentence.startsWith(`${path} `) ? sentence.slice(path.length + 1) : sentence;
    this.list.push({ path, message });
  }
  /** A sentence from the shape checks (`values.ts`), which starts with the path of the value at fault. */
  addFound(base: string, sentence: string | null): void {
    if (sentence === null) return;
    const rest = sentence.startsWith(base) ? sentence.slice(base.length) : null;
    // The path ends at the first space after the base (channel or key names with spaces are rare and only shorten it).
    const end = rest === null ? -1 : rest.indexOf(' ');
    this.add(end < 0 ? '' : base + (rest as string).slice(0, end), sentence);
  }
  /** One problem per key of `value` that `known` lacks, at `path` + the key. */
  addUnknown(value: object, known: Readonly<Record<string, true>>, where: string, path: string): void {
    this.list.push(...unknownKeyProblems(value, Object.keys(known), where, { path, noun: 'a field' }));
  }
  throwIfAny(options: { readonly subject: string; readonly source?: string }): void {
    if (this.list.length > 0) throw new InvalidRequestError(this.list, options);
  }
  /** Problems of fields the agent's defaults filled are the defaults' problems: named as `defaults.<field>`. */
  blameDefaults(defaulted: readonly string[]): void {
    const from = (path: string): boolean =>
      defaulted.some(
        (f) => path === `request.${f}` || path.startsWith(`request.${f}.`) || path.startsWith(`request.${f}[`),
      );
    for (let i = 0; i < this.list.length; i++) {
      const p = this.list[i] as RequestProblem;
      if (from(p.path)) this.list[i] = { path: `defaults.${p.path.slice('request.'.length)}`, message: p.message };
    }
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// Every field of each bag, so a misspelt key is named rather than lost; the compiler keeps them complete.
// `params` too: `defineAgent({ ...agent, model })` spreads a definition's params back in; they are recomputed.
const AGENT_FIELDS: OptionKeys<AgentDefinition> = {
  model: true,
  interpreter: true,
  store: true,
  events: true,
  syntheticObservations: true,
  defaults: true,
  params: true,
};
const SYNTHETIC_FIELDS: OptionKeys<SyntheticObservations> = { notExecuted: true, envError: true };
const REQUEST_FIELDS: OptionKeys<RunRequest> = {
  runId: true,
  budget: true,
  executor: true,
  tools: true,
  context: true,
  injections: true,
  modelBinding: true,
  modelReplayPolicy: true,
  observationTemplate: true,
  toolRenderStyle: true,
  cancelGraceMs: true,
  parallelToolCalls: true,
  historyWindow: true,
};
// A run id is per run: never a default.
const { runId: _runId, ...DEFAULT_REQUEST_FIELDS } = REQUEST_FIELDS;
const DEFAULT_FIELDS: OptionKeys<AgentDefaults> = { ...DEFAULT_REQUEST_FIELDS, goal: true };
const BUDGET_FIELDS: OptionKeys<RunRequest['budget']> = {
  maxSteps: true,
  maxValidActions: true,
  maxContextChars: true,
  maxTotalTokens: true,
};
const CONTEXT_FIELDS: OptionKeys<RunRequest['context']> = { run: true, goal: true };
const WINDOW_FIELDS: OptionKeys<NonNullable<RunRequest['historyWindow']>> = { steps: true };
const ENTRY_FIELDS: OptionKeys<SkillEntry> = { name: true, text: true };
const kind = (v: unknown): string =>
  v === null || v === undefined ? String(v) : Array.isArray(v) ? 'an array' : `a ${typeof v}`;

/** Throws one `InvalidRequestError` naming every missing or malformed field of a definition. */
export function checkAgentConfig(config: AgentConfig): void {
  const problems = new Problems();
  const add = (path: string, message: string): void => problems.add(path, `${path} ${message}`);
  if (!isRecord(config)) {
    problems.add('', 'needs a config object');
    return problems.throwIfAny({ subject: 'agent definition', source: 'defineAgent' });
  }
  problems.addUnknown(config, AGENT_FIELDS, 'the agent definition', '');
  if (isRecord(config.syntheticObservations)) {
    const path = 'syntheticObservations';
    problems.addUnknown(config.syntheticObservations, SYNTHETIC_FIELDS, path, `${path}.`);
  }
  const present = (['model', 'interpreter', 'store', 'events', 'syntheticObservations'] as const).filter((key) => {
    if (!isRecord(config[key])) add(key, 'is required');
    return isRecord(config[key]);
  });
  const has = (key: (typeof present)[number]): boolean => present.includes(key);
  if (has('model') && typeof config.model.call !== 'function') add('model.call', 'must be a function');
  if (has('interpreter') && typeof config.interpreter.interpret !== 'function')
    add('interpreter.interpret', 'must be a function');
  if (has('events') && typeof config.events.deliver !== 'function') add('events.deliver', 'must be a function');
  for (const m of ['runStarted', 'intent', 'result', 'step', 'readLog', 'runEnded'] as const) {
    if (has('store') && typeof config.store[m] !== 'function') add(`store.${m}`, 'must be a function');
  }
  if (has('model') && (!isRecord(config.model.params) || typeof config.model.params['model'] !== 'string'))
    add('model.params.model', 'must be a string naming the model');
  for (const seam of ['model', 'interpreter', 'events'] as const) {
    if (has(seam)) checkSeamParams(problems, config[seam].params, `${seam}.params`);
  }
  for (const key of ['notExecuted', 'envError'] as const) {
    const value: unknown = has('syntheticObservations') ? config.syntheticObservations[key] : '';
    if (typeof value !== 'string') add(`syntheticObservations.${key}`, `must be a string, got ${kind(value)}`);
  }
  if (config.defaults !== undefined) checkDefaults(problems, config.defaults);
  problems.throwIfAny({ subject: 'agent definition', source: 'defineAgent' });
}

/**
 * The defaults are checked when the agent is defined, as the request fields they fill: a probe
 * request of the defaults alone, and only the problems of fields the defaults gave.
 */
function checkDefaults(problems: Problems, defaults: AgentDefaults): void {
  if (!isRecord(defaults))
    return problems.add('defaults', `defaults must be an object of request fields, got ${kind(defaults)}`);
  problems.addUnknown(defaults, DEFAULT_FIELDS, "the agent's defaults", 'defaults.');
  let resolved: ResolvedRequest;
  try {
    const goalGiven =
      defaults.goal !== undefined || (isRecord(defaults.context) && defaults.context['goal'] !== undefined);
    resolved = resolveRequest({ runId: 'defaults', ...(goalGiven ? {} : { goal: 'probe' }) }, defaults);
  } catch (e) {
    if (!(e instanceof InvalidRequestError)) throw e;
    for (const p of e.problems)
      problems.add(
        p.path.replace(/^request\./, 'defaults.'),
        `${p.path.replace(/^request\./, 'defaults.')} ${p.message}`,
      );
    return;
  }
  try {
    checkRequest(resolved.request, { defaulted: resolved.defaulted });
  } catch (e) {
    if (!(e instanceof InvalidRequestError)) throw e;
    for (const p of e.problems) if (p.path.startsWith('defaults.')) problems.list.push(p);
  }
}

/**
 * Seam params enter the identity snapshot, whose canonical JSON must not throw mid-run (a BigInt,
 * a cycle) and whose hash must not depend on live objects: so they are flat primitives
 * (docs/design/records-and-recovery.md#identity-snapshot).
 */
function checkSeamParams(problems: Problems, params: unknown, path: string): void {
  if (!isRecord(params))
    return problems.add(path, `${path} must be an object of strings, numbers, booleans and nulls, got ${kind(params)}`);
  const problem = jsonProblem(params, path);
  if (problem) return problems.addFound(path, problem);
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === 'object' && value !== null)
      problems.add(
        `${path}.${key}`,
        `${path}.${key} must be a string, number, boolean or null, ` +
          `got ${Array.isArray(value) ? 'an array' : 'an object'}`,
      );
  }
}

/** The longest delay `setTimeout` honours; a larger one overflows and fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Throws one `InvalidRequestError` naming every missing or malformed field of a request (its
 * `problems`, each with a path) — the check `run` and `resume` make before anything else.
 * Exported (as `validateRunRequest`) for hosts that build requests from untrusted input and want
 * to refuse them before storing anything.
 *
 * @example
 * try {
 *   validateRunRequest(request);
 * } catch (e) {
 *   if (isPolyLoopError(e, 'invalid_request')) return badRequest(e.message);
 *   throw e;
 * }
 */
export function checkRequest(
  req: RunRequest,
  opts: { readonly defaulted?: readonly string[]; readonly source?: string } = {},
): void {
  const problems = new Problems();
  if (!isRecord(req)) {
    problems.add('request', 'request must be an object');
    return problems.throwIfAny({ subject: 'run request' });
  }
  const add = (path: string, message: string): void => problems.add(path, `${path} ${message}`);
  problems.addUnknown(req, REQUEST_FIELDS, 'the run request', 'request.');
  if (typeof req.runId !== 'string') add('request.runId', 'must be a string');
  checkBudget(problems, req.budget);
  const registry = req.tools instanceof ToolRegistry;
  if (!registry) add('request.tools', 'must be a ToolRegistry (ToolRegistry.of([]) for none)');
  if (!isRecord(req.executor) || typeof req.executor.execute !== 'function')
    add('request.executor', 'must be an ActionExecutor');
  if (isRecord(req.executor)) {
    // Absent and null both enter the snapshot as null.
    if (req.executor.params != null) checkSeamParams(problems, req.executor.params, 'request.executor.params');
    const policy = req.executor.replayPolicy;
    if (policy !== undefined && policy !== 'safe' && policy !== 'never')
      add(
        'request.executor.replayPolicy',
        `must be "safe", "never" or absent, got ${JSON.stringify(policy) ?? typeof policy}`,
      );
    if (registry && req.executor instanceof RegistryExecutor) checkExecutorMatches(problems, req.executor, req.tools);
  }
  checkContext(problems, req.context);
  checkInjections(problems, req.injections);
  checkBinding(problems, req.modelBinding);
  if (req.modelReplayPolicy !== 'safe' && req.modelReplayPolicy !== 'never')
    add('request.modelReplayPolicy', 'must be "safe" or "never"');
  if (typeof req.observationTemplate !== 'string') add('request.observationTemplate', 'must be a string');
  if (!['none', 'json', 'markdown'].includes(req.toolRenderStyle))
    add('request.toolRenderStyle', 'must be "none", "json" or "markdown"');
  const grace: unknown = req.cancelGraceMs;
  if (typeof grace !== 'number' || !(grace >= 0 && grace <= MAX_TIMER_MS))
    add('request.cancelGraceMs', `must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${String(grace)}`);
  const parallel: unknown = req.parallelToolCalls;
  if (
    parallel !== undefined &&
    !(Number.isSafeInteger(parallel) && (parallel as number) >= 1 && (parallel as number) <= 64)
  )
    add('request.parallelToolCalls', `must be an integer from 1 to 64, got ${String(parallel)}`);
  checkWindow(problems, req.historyWindow);
  problems.blameDefaults(opts.defaulted ?? []);
  problems.throwIfAny(
    opts.source === undefined ? { subject: 'run request' } : { subject: 'run request', source: opts.source },
  );
}

/** At least one step: the step that ends a run is kept, since its result (answer, error) is read from it. */
function checkWindow(problems: Problems, window: RunRequest['historyWindow']): void {
  if (window === undefined) return;
  const path = 'request.historyWindow';
  if (!isRecord(window)) return problems.add(path, `${path} must be { steps } or absent, got ${kind(window)}`);
  problems.addUnknown(window, WINDOW_FIELDS, path, `${path}.`);
  const steps: unknown = window.steps;
  if (!Number.isSafeInteger(steps) || (steps as number) < 1)
    problems.add(
      `${path}.steps`,
      `${path}.steps must be a positive integer, got ${JSON.stringify(steps) ?? 'undefined'}`,
    );
}

function checkBudget(problems: Problems, budget: RunRequest['budget']): void {
  if (!isRecord(budget)) return problems.add('request.budget', 'request.budget is required');
  problems.addUnknown(budget, BUDGET_FIELDS, 'request.budget', 'request.budget.');
  for (const key of ['maxSteps', 'maxValidActions', 'maxContextChars'] as const) {
    const n = budget[key];
    if (!Number.isSafeInteger(n) || n <= 0)
      problems.add(
        `request.budget.${key}`,
        `request.budget.${key} must be a positive integer, got ${JSON.stringify(n)}`,
      );
  }
  const tokens = budget.maxTotalTokens;
  if (tokens !== undefined && (!Number.isSafeInteger(tokens) || tokens <= 0))
    problems.add(
      'request.budget.maxTotalTokens',
      `request.budget.maxTotalTokens must be a positive integer or absent, got ${JSON.stringify(tokens)}`,
    );
}

/**
 * Every block is checked, not only every message: an unknown block or a non-string text measures
 * NaN and switches the context limit off, and anything JSON cannot hold (a BigInt, a cycle) makes
 * the snapshot's canonical JSON throw mid-run. The depth limit leaves room for the two levels
 * (record, snapshot) that wrap the context in the `run_started` record.
 */
function checkContext(problems: Problems, context: RunRequest['context']): void {
  if (!isRecord(context))
    return problems.add('request.context', 'request.context must be an object with run and goal message arrays');
  problems.addUnknown(context, CONTEXT_FIELDS, 'request.context', 'request.context.');
  let found = problems.list.length;
  for (const key of ['run', 'goal'] as const) {
    const messages: unknown = context[key];
    if (!Array.isArray(messages)) {
      problems.add(
        `request.context.${key}`,
        `request.context.${key} must be an array of messages, got ${kind(messages)}`,
      );
      continue;
    }
    messages.forEach((m: unknown, i) =>
      problems.addFound(`request.context.${key}[${i}]`, messageProblem(m, `request.context.${key}[${i}]`)),
    );
  }
  // The whole-context walk would repeat a problem the messages already named.
  found = problems.list.length - found;
  if (found === 0) problems.addFound('request.context', jsonProblem(context, 'request.context', MAX_JSON_DEPTH - 2));
}

function checkInjections(problems: Problems, injections: RunRequest['injections']): void {
  if (!isRecord(injections))
    return problems.add(
      'request.injections',
      `request.injections must be an object of channel → entries, got ${kind(injections)}`,
    );
  const problem = jsonProblem(injections, 'request.injections');
  if (problem) return problems.addFound('request.injections', problem);
  for (const [channel, entries] of Object.entries(injections)) {
    const path = `request.injections.${channel}`;
    if (!Array.isArray(entries)) {
      problems.add(path, `${path} must be an array of { name, text }, got ${kind(entries)}`);
      continue;
    }
    entries.forEach((entry: unknown, i) => {
      if (!isRecord(entry))
        return problems.add(`${path}[${i}]`, `${path}[${i}] must be a { name, text } object, got ${kind(entry)}`);
      problems.addUnknown(entry, ENTRY_FIELDS, 'a skill entry', `${path}[${i}].`);
      for (const key of ['name', 'text'] as const) {
        if (typeof entry[key] !== 'string')
          problems.add(`${path}[${i}].${key}`, `${path}[${i}].${key} must be a string, got ${kind(entry[key])}`);
      }
    });
  }
}

function checkBinding(problems: Problems, binding: RunRequest['modelBinding']): void {
  if (!isRecord(binding))
    return problems.add(
      'request.modelBinding',
      `request.modelBinding must map strings to strings, got ${kind(binding)}`,
    );
  const before = problems.list.length;
  for (const [key, value] of Object.entries(binding)) {
    if (typeof value !== 'string')
      problems.add(`request.modelBinding.${key}`, `request.modelBinding.${key} must be a string, got ${kind(value)}`);
  }
  if (problems.list.length === before)
    problems.addFound('request.modelBinding', jsonProblem(binding, 'request.modelBinding'));
}

/**
 * A registry executor must run exactly the tools the model sees (decision 0003): one derived from
 * a wider registry would run tools hidden from this run, a narrower one would refuse visible
 * ones, and one with other schemas or replay policies would enforce what the model was not told
 * and the run's identity does not record.
 */
function checkExecutorMatches(problems: Problems, executor: RegistryExecutor, tools: ToolRegistry): void {
  if (executor.registry === tools) return;
  const own = new Set(executor.registry.names());
  const visible = new Set(tools.names());
  const extra = [...own].filter((n) => !visible.has(n));
  const missing = [...visible].filter((n) => !own.has(n));
  if (extra.length + missing.length > 0) {
    const sentence =
      'request.executor was derived from a different registry than request.tools ' +
      `(only in executor: ${extra.join(', ') || '-'}; only in tools: ${missing.join(', ') || '-'})`;
    return problems.add('request.executor', sentence);
  }
  const differing = [...visible].filter((n) => {
    const a = executor.registry.get(n);
    const b = tools.get(n);
    return a !== b && canonicalJson(a) !== canonicalJson(b);
  });
  if (differing.length > 0)
    problems.add(
      'request.executor',
      'request.executor describes tools differently from request.tools ' +
        `(its registry has other specs for: ${differing.join(', ')})`,
    );
}
