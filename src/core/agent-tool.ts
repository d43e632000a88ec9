/**
 * Sub-agents as durable child runs (docs/design/sub-agents.md): `agentTool` makes a tool whose call
 * runs another agent as a run of its own, with its own log, on that agent's store. The child's id
 * comes from the parent's run id and the call's resultId, so replaying the call resumes the child:
 * its finished steps are not redone and its `never` actions keep at most once. That is why the
 * tool's replay policy is `safe`.
 * @module
 */
import { childRunId, endsParent, NO_CHILD_CALL, registerChildRunner } from './child-runs.ts';
import type { ChildAnswer, ChildContext, ChildOutcome } from './child-runs.ts';
import { describeError, InvalidRequestError, isPolyLoopError, StoreError } from './errors.ts';
import { checkOptionKeys } from './options.ts';
import type { OptionKeys } from './options.ts';
import type { AgentDefinition, ResumeOptions, RunRequestInput } from './request.ts';
import { readRunLog } from './run-log.ts';
import { storedResult } from './step-record.ts';
import { resume, run } from './run.ts';
import { isThenable } from './seam-values.ts';
import type { ToolContext, ToolSpec } from './tools.ts';
import type { InputRequest, JsonObject, LogRecord, RunResult } from './types.ts';

/** The child's request as `request` returns it: a `RunRequestInput` whose `runId` the library sets. */
export type ChildRequestInput = Omit<RunRequestInput, 'runId'> & { readonly runId?: string };

/** What {@link agentTool} takes. */
export type AgentToolOptions = {
  readonly name: string;
  readonly description: string;
  /** A JSON Schema (draft 2020-12) for the arguments the parent's model gives. */
  readonly parameters: JsonObject;
  /** The child's agent: its store holds the child's log (give the parent's store to keep them together). */
  readonly agent: AgentDefinition;
  /**
   * The child's request for one call: a partial request is filled from `agent`'s defaults. Called
   * again on every replay of the call, so it must give the same request for the same arguments.
   */
  readonly request: (args: JsonObject, ctx: { readonly runId: string }) => ChildRequestInput;
  /** Default false. True: a person approves each call before the child starts. */
  readonly needsApproval?: boolean;
};

const OPTIONS: OptionKeys<AgentToolOptions> = {
  name: true,
  description: true,
  parameters: true,
  agent: true,
  request: true,
  needsApproval: true,
};

/**
 * A tool whose call runs `agent` as a child run (docs/design/sub-agents.md). The child's final
 * answer is the observation; a child that ends otherwise is an observation saying how it ended. A
 * child that waits for a person pauses the parent on a request of kind `child`, and the reply the
 * parent is given reaches the child. Cancelling the parent cancels the child; the child's token
 * usage counts in the parent's step.
 *
 * @example
 * const research = agentTool({
 *   name: 'research', description: 'Researches a question and answers it',
 *   parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
 *   agent: researcher,
 *   request: (args) => ({ goal: String(args['question']) }),
 * });
 * const tools = ToolRegistry.of([research]);
 */
export function agentTool(options: AgentToolOptions): ToolSpec {
  checkOptionKeys(options, OPTIONS, 'agentTool');
  const { name, description, parameters, agent, request, needsApproval } = options;
  if (typeof request !== 'function')
    throw new InvalidRequestError(`agentTool ${JSON.stringify(name)}: request must be a function`);
  if (typeof agent !== 'object' || agent === null || typeof agent.store?.readLog !== 'function')
    throw new InvalidRequestError(`agentTool ${JSON.stringify(name)}: agent must be an agent from defineAgent`);
  const runner = (args: JsonObject, ctx: ChildContext): Promise<ChildOutcome> => runChild(agent, request, args, ctx);
  // Called directly (a custom executor that calls handlers), the child runs the same way; a pause
  // cannot reach a person through a string, so it is an error the observation names.
  const handler = async (args: JsonObject, ctx: ToolContext): Promise<string> => {
    const outcome = await runner(args, { ...ctx, ...NO_CHILD_CALL });
    if (outcome.kind === 'ended') return outcome.observation;
    throw new Error(
      `sub-agent run ${JSON.stringify(outcome.child.runId)} awaits input, which only a ToolRegistry's executor ` +
        'carries to a person',
    );
  };
  registerChildRunner(handler, runner);
  const approval = needsApproval === undefined ? {} : { needsApproval };
  return { name, description, parameters, replayPolicy: 'safe', handler, ...approval };
}

/** Run the child, or resume it where its log stands (carrying the reply when there is one). */
async function runChild(
  agent: AgentDefinition,
  requestOf: AgentToolOptions['request'],
  args: JsonObject,
  ctx: ChildContext,
): Promise<ChildOutcome> {
  const runId = childRunId(ctx.runId, ctx.resultId);
  const { signal } = ctx;
  let result: RunResult;
  // Whether the child's run was asked for (before that, nothing of it can exist).
  let reached = false;
  try {
    const req = childRequest(requestOf, args, runId);
    reached = true;
    const found = await startOrResume(agent, req, signal, ctx);
    if (found === null) return { kind: 'ended', runId: null, observation: 'Cancelled.', usage: NO_TOKENS };
    result = found;
    if (result.stopReason === 'awaiting_input' && result.pending) {
      const { pending } = result;
      if (depthOf(pending) >= MAX_DEPTH)
        throw new InvalidRequestError(
          `sub-agents nest deeper than ${MAX_DEPTH} levels below run ${JSON.stringify(runId)}`,
        );
      const repeat = (await requestsOf(agent, runId, pending.resultId)) - 1;
      const child = { runId, request: pending, ...(repeat > 0 ? { repeat } : {}) };
      if (signal.aborted) await cancelPaused(agent, req, pending, ctx);
      return { kind: 'paused', child, usage: result.usage };
    }
  } catch (e) {
    if (signal.aborted || endsParent(e)) throw e;
    // Like a handler that threw: the parent's model reads what went wrong. The records name the
    // child only when it has a log (a request refused before its first record started none).
    const ran = reached && (await childLog(agent, runId)).length > 0;
    const observation = describeError(e);
    return { kind: 'ended', runId: ran ? runId : null, observation, usage: NO_TOKENS };
  }
  return { kind: 'ended', runId, observation: observationOf(result), usage: result.usage };
}

const NO_TOKENS = Object.freeze({ inputTokens: 0, outputTokens: 0 });

/**
 * How deep sub-agents' requests may nest: each level is a record inside a record, and a log must
 * stay readable (its decoder and `importRun` bound how deep JSON may nest).
 */
const MAX_DEPTH = 32;

function depthOf(request: InputRequest): number {
  let depth = 0;
  for (let r = request; r.kind === 'child' && r.child; r = r.child.request) depth++;
  return depth;
}

/**
 * How deep a chain of sub-agent runs may go: each level waits on the next, so a sub-agent that
 * delegates to itself (or two that delegate to each other) must end somewhere. Deeper than the
 * requests that may reach a person ({@link MAX_DEPTH}), so a leaf's request meets that limit first.
 */
const MAX_RUN_DEPTH = 64;

/** A child id's suffix: the parent's action (`.s3.action`) or call (`.s3.a1`). */
const CHILD_SUFFIX = /\.s\d+\.(?:action|a\d+)$/;

/** How many sub-agent levels below its top run `runId` is, read from the id (`p.s0.action.s2.a1` is 2). */
function runDepthOf(runId: string): number {
  let depth = 0;
  for (let id = runId; CHILD_SUFFIX.test(id); id = id.replace(CHILD_SUFFIX, '')) depth++;
  return depth;
}

/**
 * The parent was cancelled while its child paused (the abort came as the child wrote its question):
 * no one will be shown that question, so the child hears the cancel and ends too. Then the abort.
 */
async function cancelPaused(
  agent: AgentDefinition,
  req: RunRequestInput,
  pending: InputRequest,
  ctx: ChildContext,
): Promise<never> {
  const upgrade = ctx.upgrade === null ? {} : { upgrade: ctx.upgrade };
  const input = { kind: 'cancel' as const, resultId: pending.resultId };
  // No signal: the parent has one aborted already, and bounds how long it waits for this.
  await resumeChild(agent, req, { input, ...upgrade }).catch(() => undefined);
  throw ctx.signal.reason;
}

/** The child's request for this call, or why there is none (the call's observation). */
function childRequest(requestOf: AgentToolOptions['request'], args: JsonObject, runId: string): RunRequestInput {
  if (runDepthOf(runId) > MAX_RUN_DEPTH)
    throw new InvalidRequestError(`a sub-agent is not started: sub-agents nest at most ${MAX_RUN_DEPTH} levels deep`);
  const given: unknown = requestOf(args, { runId });
  if (isThenable(given)) {
    // An async request function: its rejection would go unhandled (and end a Node process).
    Promise.resolve(given).catch(() => undefined);
    throw new InvalidRequestError('the request function of a sub-agent must return a request object, not a promise');
  }
  if (typeof given !== 'object' || given === null)
    throw new InvalidRequestError('the request function of a sub-agent must return a request object');
  const request = given as ChildRequestInput;
  if (request.runId !== undefined && request.runId !== runId) {
    throw new InvalidRequestError(
      `a sub-agent's run id is ${JSON.stringify(runId)} (its parent's run and call); ` +
        `the request function gave ${JSON.stringify(request.runId)}`,
    );
  }
  return { ...request, runId };
}

/** The child's log; a failed read is the child's store failing (it ends the parent, which stays resumable). */
async function childLog(agent: AgentDefinition, runId: string): Promise<readonly LogRecord[]> {
  try {
    return await agent.store.readLog(runId);
  } catch (e) {
    if (isPolyLoopError(e)) throw e;
    throw new StoreError(runId, 'readLog', e);
  }
}

/** How many input requests with `resultId` the child's log holds. */
function requestsIn(log: readonly LogRecord[], resultId: string): number {
  let n = 0;
  for (const rec of log) if (rec.kind === 'input_request' && rec.resultId === resultId) n++;
  return n;
}

async function requestsOf(agent: AgentDefinition, runId: string, resultId: string): Promise<number> {
  return requestsIn(await childLog(agent, runId), resultId);
}

async function startOrResume(
  agent: AgentDefinition,
  req: RunRequestInput,
  signal: AbortSignal,
  ctx: ChildContext,
): Promise<RunResult | null> {
  const { answer } = ctx;
  // A deploy that upgraded the parent upgrades the child it resumes (an unchanged child writes nothing).
  const upgrade = ctx.upgrade === null ? {} : { upgrade: ctx.upgrade };
  const opts = { signal, ...upgrade };
  if (answer === null) {
    try {
      return await run(agent, req, { signal });
    } catch (e) {
      if (!isPolyLoopError(e, 'run_exists')) throw e;
    }
    return resumeChild(agent, req, opts);
  }
  const result = await deliver(agent, req, answer, opts);
  if (result === null) return null;
  // A person who cancelled meant the child's work, whatever it asks now: a child that had moved on
  // (answered elsewhere, or asked again) hears the cancel on the question it holds open.
  if (answer.reply.kind !== 'cancel' || result.stopReason !== 'awaiting_input' || !result.pending) return result;
  return resumeChild(agent, req, { ...opts, input: { kind: 'cancel', resultId: result.pending.resultId } });
}

/**
 * Carry the parent's reply to the child's very request, or resume the child without it when that is
 * no longer open. Null for a cancel of a child that has no log here.
 */
async function deliver(
  agent: AgentDefinition,
  req: RunRequestInput,
  answer: ChildAnswer,
  opts: ResumeOptions,
): Promise<RunResult | null> {
  const { asked } = answer;
  const input = { ...answer.reply, resultId: asked.request.resultId };
  const log = await childLog(agent, req.runId);
  // The parent holds the child's request, so the child has a log: one that is not there was lost or
  // left behind (a parent imported without it). Starting the child afresh would run again what it
  // had done and drop the person's reply; the parent waits, resumable, until the log is back. A
  // cancel needs no child: nothing runs, and the parent ends (null: no child run to report).
  if (log.length === 0 && answer.reply.kind === 'cancel') return null;
  if (log.length === 0)
    throw new StoreError(
      req.runId,
      'readLog',
      new Error(
        `no log, though its parent holds its request ${answer.reply.resultId}: import it, then resume the parent`,
      ),
    );
  // The reply is for the request the parent showed, not a later one of the same id: a settlement
  // asked again after a crashed retry must be asked again, not answered by the old reply.
  if (requestsIn(log, input.resultId) !== (asked.repeat ?? 0) + 1) return resumeChild(agent, req, opts);
  try {
    return await resumeChild(agent, req, { ...opts, input });
  } catch (e) {
    // The reply reached the child before a crash of the parent: the child goes on from its log.
    if (!isPolyLoopError(e, 'invalid_input')) throw e;
    return resumeChild(agent, req, opts);
  }
}

/**
 * Resume a child. One that has ended gives its stored result even if its agent changed since: the
 * parent only needs its answer, and an ended run is never upgraded.
 */
async function resumeChild(agent: AgentDefinition, req: RunRequestInput, opts: ResumeOptions): Promise<RunResult> {
  try {
    return await resume(agent, req, opts);
  } catch (e) {
    if (!isPolyLoopError(e, 'run_identity_mismatch')) throw e;
    const view = readRunLog(await childLog(agent, req.runId));
    if (view.ended === null) throw e;
    return storedResult(req.runId, view);
  }
}

/** What the parent's model reads of a child run that ended. */
function observationOf(result: RunResult): string {
  if (result.stopReason === 'final_answer' && result.finalAnswer !== null) return result.finalAnswer;
  const error = result.error === null ? '' : `: ${result.error}`;
  return (
    `The sub-agent run ${JSON.stringify(result.runId)} ended without a final answer ` +
    `(${result.stopReason}${error}) after ${result.steps} step${result.steps === 1 ? '' : 's'}.`
  );
}
