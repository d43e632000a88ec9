/**
 * From what a caller passes to a complete `RunRequest`: the agent's defaults fill what the
 * request leaves out, `goal` is the short form of `context.goal`, and a resume by run id
 * rebuilds the request from the log. See docs/upgrades.md.
 * @module
 */
import { InvalidRequestError } from './errors.ts';
import type { RequestProblem } from './errors.ts';
import type { AgentDefaults, AgentDefinition, RunRequest, RunRequestInput } from './request.ts';
import type { Budget, Message, ParamSnapshot, StoredRequest } from './types.ts';

/** A complete request and the fields the agent's defaults filled (`context.run`, `budget`, …), sorted. */
export type ResolvedRequest = { readonly request: RunRequest; readonly defaulted: readonly string[] };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Request fields filled as a whole from the defaults; `context` is filled per message list. */
const WHOLE_FIELDS = [
  'budget',
  'executor',
  'tools',
  'injections',
  'modelBinding',
  'modelReplayPolicy',
  'observationTemplate',
  'toolRenderStyle',
  'cancelGraceMs',
  'parallelToolCalls',
  'historyWindow',
] as const;

/** A string goal is one user text message. */
export function goalMessages(goal: string | readonly Message[]): readonly Message[] {
  return typeof goal === 'string' ? [{ role: 'user', content: [{ type: 'text', text: goal }] }] : goal;
}

/**
 * The complete request `input` and the agent's `defaults` make: a field the request gives wins.
 * What is still missing or malformed is left for `checkRequest` to name; only what this step
 * alone can see (a goal given twice, a goal of the wrong type) throws here.
 */
export function resolveRequest(input: RunRequestInput, defaults: AgentDefaults | undefined): ResolvedRequest {
  if (!isRecord(input)) return { request: input as unknown as RunRequest, defaulted: [] };
  const d: Partial<Record<string, unknown>> & AgentDefaults = defaults ?? {};
  const problems: RequestProblem[] = [];
  const defaulted: string[] = [];
  const { goal, context, ...rest } = input;
  const out: Record<string, unknown> = { ...rest };
  for (const field of WHOLE_FIELDS) {
    if (out[field] === undefined && d[field] !== undefined) {
      out[field] = d[field];
      defaulted.push(field);
    }
  }
  if (context !== undefined && !isRecord(context)) {
    out['context'] = context;
  } else {
    const given = context ?? {};
    if (goal !== undefined && given.goal !== undefined)
      problems.push({ path: 'request.goal', message: 'and request.context.goal both give the goal: give one' });
    if (goal !== undefined && typeof goal !== 'string' && !Array.isArray(goal))
      problems.push({ path: 'request.goal', message: `must be a string or an array of messages, got ${typeof goal}` });
    const fromDefaults = isRecord(d.context) ? d.context : {};
    let goalValue: unknown = goal !== undefined ? goal : given.goal;
    if (goalValue === undefined && (d.goal !== undefined || fromDefaults.goal !== undefined)) {
      goalValue = d.goal ?? fromDefaults.goal;
      defaulted.push('context.goal');
    }
    let runValue: unknown = given.run;
    if (runValue === undefined) {
      runValue = fromDefaults.run ?? [];
      defaulted.push('context.run');
    }
    if (goalValue === undefined)
      problems.push({
        path: 'request.goal',
        message: "is required (a string or messages), here or in the agent's defaults",
      });
    const goalMessagesValue = typeof goalValue === 'string' ? goalMessages(goalValue) : goalValue;
    out['context'] = { ...given, run: runValue, goal: goalMessagesValue };
  }
  if (problems.length > 0) throw new InvalidRequestError(problems, { subject: 'run request' });
  return { request: out as unknown as RunRequest, defaulted: defaulted.sort() };
}

/**
 * The request of a run resumed by id: the data fields the caller gave come from the log (its
 * snapshot in force and stored request); a field the agent's defaults filled follows the agent's
 * current defaults (else the logged value); tools and executor, which are code, come from the
 * agent. Throws `InvalidRequestError` for a log older than stored requests, or an agent without
 * the tools or executor to give.
 */
export function requestFromLog(
  agent: AgentDefinition,
  runId: string,
  snapshot: ParamSnapshot,
  stored: StoredRequest | null,
  logVersion: string,
): ResolvedRequest {
  if (stored === null) {
    const message =
      `was started under record version ${logVersion}, which predates stored requests: ` +
      'resume it with its request, resume(agent, request)';
    throw new InvalidRequestError([{ path: `run ${JSON.stringify(runId)}`, message }], {
      subject: 'run log',
      source: 'resume',
    });
  }
  const d: AgentDefaults = agent.defaults ?? {};
  const problems: RequestProblem[] = [];
  for (const part of ['tools', 'executor'] as const) {
    if (d[part] === undefined) {
      const why = 'the log keeps no code';
      const message = `is required to resume by run id: ${why}, so the ${part} come from the agent's defaults`;
      problems.push({ path: `defaults.${part}`, message });
    }
  }
  if (problems.length > 0) throw new InvalidRequestError(problems, { subject: 'agent definition', source: 'resume' });
  const filled = new Set(stored.defaulted);
  const pick = <T>(field: string, logged: T, current: T | undefined): T =>
    filled.has(field) && current !== undefined ? current : logged;
  // A log is checked, not trusted: a snapshot without a context object gives none, and checkRequest names it.
  const logged = snapshot['context'];
  const context = (isRecord(logged) ? logged : {}) as unknown as RunRequest['context'];
  const defaultGoal = d.goal !== undefined ? goalMessages(d.goal) : d.context?.goal;
  const request: RunRequest = {
    runId,
    budget: pick('budget', snapshot['budget'] as unknown as Budget, d.budget),
    tools: d.tools as RunRequest['tools'],
    executor: d.executor as RunRequest['executor'],
    context: {
      run: pick('context.run', context.run, d.context?.run),
      goal: pick('context.goal', context.goal, defaultGoal),
    },
    injections: pick('injections', snapshot['injections'] as unknown as RunRequest['injections'], d.injections),
    modelBinding: pick(
      'modelBinding',
      snapshot['modelBinding'] as unknown as RunRequest['modelBinding'],
      d.modelBinding,
    ),
    modelReplayPolicy: pick(
      'modelReplayPolicy',
      snapshot['modelReplayPolicy'] as RunRequest['modelReplayPolicy'],
      d.modelReplayPolicy,
    ),
    observationTemplate: pick('observationTemplate', snapshot['observationTemplate'] as string, d.observationTemplate),
    toolRenderStyle: pick(
      'toolRenderStyle',
      snapshot['toolRenderStyle'] as RunRequest['toolRenderStyle'],
      d.toolRenderStyle,
    ),
    cancelGraceMs: pick('cancelGraceMs', stored.cancelGraceMs, d.cancelGraceMs),
    ...parallelOf(pick('parallelToolCalls', snapshot['parallelToolCalls'] as number | undefined, d.parallelToolCalls)),
    ...windowOf(pick('historyWindow', snapshot['historyWindow'] as RunRequest['historyWindow'], d.historyWindow)),
  };
  return { request, defaulted: stored.defaulted };
}

/** `{ parallelToolCalls }` when the run has it (the snapshot holds it only above 1), else nothing. */
function parallelOf(n: number | undefined): { readonly parallelToolCalls?: number } {
  return n === undefined ? {} : { parallelToolCalls: n };
}

/** `{ historyWindow }` when the run has one (the snapshot holds it only when given), else nothing. */
function windowOf(w: RunRequest['historyWindow']): Pick<RunRequest, 'historyWindow'> {
  return w === undefined ? {} : { historyWindow: w };
}
