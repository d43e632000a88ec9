/**
 * The story `crashAtEveryWrite` tells, driven from wherever a crash left it: the old code
 * (agent A) until the upgrade point, then the new code (agent B), resumed with `{ upgrade }`, to
 * the end — every input request answered alike — and the count of executions that outlives the
 * crash. Internal to the test kit; crash-law.ts holds the public options and the checks.
 * @module
 */
import { readRunLog, resume, run } from '../core/index.ts';
import type {
  Action,
  ActionExecutor,
  AgentDefinition,
  ExecuteContext,
  InputReply,
  InputRequest,
  LogRecord,
  RunLogView,
  RunRequestInput,
  RunResult,
  RunStore,
  StepWriteRecord,
} from '../core/index.ts';
import { watchTakeover } from './crash-marks.ts';
import { interceptWrites } from './faulty-store.ts';

/** Builds an agent and its request over a store, as a (re)started process would. */
export type StorySetup<R> = (store: RunStore) => { readonly agent: AgentDefinition; readonly request: R };

/** When the new code takes over: `'input'`, or a predicate over the run's log (`CrashLawUpgrade.at`). */
export type UpgradePoint = 'input' | ((view: RunLogView) => boolean);

/** The reply a person gives to an open request, the same every time it is asked. */
export type StoryReply = (pending: InputRequest) => InputReply;

/** The story, as the public options give it, with the run's id. */
export type Story = {
  readonly runId: string;
  readonly setup: StorySetup<RunRequestInput>;
  readonly reply: StoryReply | undefined;
  readonly upgrade: StoryUpgrade | undefined;
};

/** The new code, its reason, and where it takes over. */
export type StoryUpgrade = {
  readonly setup: StorySetup<RunRequestInput | string>;
  readonly reason: string;
  readonly at: UpgradePoint;
};

/**
 * What one case keeps across its crash, as the outside world would: how many times each action
 * ran (by result id), and the run's step records when the new code first took over.
 */
export type CaseMemory = {
  readonly executions: Map<string, number>;
  stepsAtTakeover: readonly StepWriteRecord[] | null;
  /** What was wrong with the `resumed` marks each driver left (crash-marks.ts); empty when the law holds. */
  readonly takeovers: string[];
};

/** How a story ended: its result, or the failure (returned, not thrown). */
export type StoryEnd =
  | { readonly ok: true; readonly result: RunResult }
  | { readonly ok: false; readonly error: unknown };

const MAX_REPLIES = 1_000;

/** The old code's writes stop here: it reached the upgrade point, and the new code takes over. */
class UpgradePointReached extends Error {
  override readonly name = 'UpgradePointReached';
}

/**
 * Drive the story to its end over `store`. `resuming`: a process restarted after a crash, which
 * reads the log to know where the story is — past the upgrade point once the log holds the upgrade
 * record or shows the point, else still the old code's (a crash before the first write left no
 * log, so the run starts again).
 */
export async function driveStory(
  story: Story,
  store: RunStore,
  memory: CaseMemory,
  resuming: boolean,
): Promise<StoryEnd> {
  try {
    const log = resuming ? await store.readLog(story.runId) : [];
    const { upgrade } = story;
    // Without an upgrade point the old code runs to the end.
    if (upgrade === undefined) {
      return { ok: true, result: (await oldCode(story, { store, memory, at: null }, log)) as RunResult };
    }
    const view = readRunLog(log);
    const passed = view.upgrades.length > 0 || (log.length > 0 && reachedIn(upgrade.at, view));
    if (!passed) {
      const end = await oldCode(story, { store, memory, at: upgrade.at }, log);
      if (end !== 'takeover') throw new Error(`the run ended (${end.stopReason}) before the upgrade point`);
    }
    return { ok: true, result: await newCode(story, store, memory) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The step records of a log, in order. */
export function stepRecords(log: readonly LogRecord[]): StepWriteRecord[] {
  return log.filter((r): r is StepWriteRecord => r.kind === 'step');
}

/** A person's approval or answer is open; a settlement, which only a crash raises, is not the point. */
const awaitsPerson = (view: RunLogView): boolean => view.pending !== null && view.pending.kind !== 'settle';

function reachedIn(at: UpgradePoint, view: RunLogView): boolean {
  return at === 'input' ? awaitsPerson(view) : at(view) === true;
}

/**
 * Agent A from the log `found` at the process's start, answering its requests, until the upgrade
 * point (`'takeover'`: asked before each of A's writes, which then does not happen, and after
 * each call returns) or, with no point, to the end.
 */
async function oldCode(
  story: Story,
  { store, memory, at }: { readonly store: RunStore; readonly memory: CaseMemory; readonly at: UpgradePoint | null },
  found: readonly LogRecord[],
): Promise<RunResult | 'takeover'> {
  // The log as this process knows it — what it found and each of its writes that landed: no read
  // per write, and the same view whatever a store keeps back until its next barrier.
  const log = [...found];
  const reached = (): boolean => at !== null && reachedIn(at, readRunLog(log));
  let stopped = false;
  const stopping = interceptWrites(store, async (method, _runId, records, doWrite) => {
    if (!stopped && reached()) stopped = true;
    if (stopped) throw new UpgradePointReached(`the old code stops before its ${method} write: the upgrade point`);
    await doWrite();
    log.push(...records);
  });
  const call = (input?: InputReply): Promise<RunResult> => {
    const a = counted(story.setup(stopping), memory);
    const mode = input !== undefined || found.length > 0 ? 'resume' : 'run';
    return watchTakeover(store, story.runId, { mode, input }, memory.takeovers, () => {
      if (input !== undefined) return resume(a.agent, a.request, { input });
      return mode === 'resume' ? resume(a.agent, a.request) : run(a.agent, a.request);
    });
  };
  try {
    let result = await call();
    for (let n = 0; ; n++) {
      if (reached()) return 'takeover';
      if (result.pending === null) return result;
      result = await call(replyTo(story, result.pending, n));
    }
  } catch (e) {
    if (stopped) return 'takeover';
    throw e;
  }
}

/**
 * Agent B past the upgrade point: every call asks for the upgrade, as a process started after the
 * deploy would — the first writes the record (or writes it again when a crash lost it), the rest
 * find the identity already in force and write none.
 */
async function newCode(story: Story, store: RunStore, memory: CaseMemory): Promise<RunResult> {
  const upgrade = story.upgrade as StoryUpgrade;
  memory.stepsAtTakeover ??= stepRecords(await store.readLog(story.runId));
  const ask = { upgrade: { reason: upgrade.reason } };
  const call = (input?: InputReply): Promise<RunResult> => {
    const b = counted(upgrade.setup(store), memory);
    return watchTakeover(store, story.runId, { mode: 'resume', input }, memory.takeovers, () =>
      resume(b.agent, b.request, input === undefined ? ask : { ...ask, input }),
    );
  };
  let result = await call();
  for (let n = 0; result.pending !== null; n++) {
    result = await call(replyTo(story, result.pending, n));
  }
  return result;
}

function replyTo(story: Story, pending: InputRequest, n: number): InputReply {
  if (!story.reply) {
    throw new Error(`the run asks for input (${pending.kind} ${pending.resultId}) and no reply was scripted`);
  }
  if (n >= MAX_REPLIES) throw new Error(`more than ${MAX_REPLIES} input requests`);
  return story.reply(pending);
}

/** The setup's agent and request with every executor counting (the request's own, and the defaults'). */
function counted<R extends RunRequestInput | string>(
  built: { readonly agent: AgentDefinition; readonly request: R },
  memory: CaseMemory,
): { agent: AgentDefinition; request: R } {
  const { executions } = memory;
  const count = (ctx: ExecuteContext): void => {
    executions.set(ctx.resultId, (executions.get(ctx.resultId) ?? 0) + 1);
  };
  const { agent, request } = built;
  const fromDefaults = agent.defaults?.executor;
  const countedAgent =
    fromDefaults === undefined
      ? agent
      : Object.freeze({
          ...agent,
          defaults: Object.freeze({ ...agent.defaults, executor: countingExecutor(fromDefaults, count) }),
        });
  if (typeof request === 'string' || request.executor === undefined) return { agent: countedAgent, request };
  const executor = countingExecutor(request.executor, count);
  return { agent: countedAgent, request: { ...(request as RunRequestInput), executor } as R };
}

/**
 * The executor, each execution counted first. The wrapper inherits from it, so what the loop asks
 * of it (`instanceof RegistryExecutor`, its registry) is unchanged; its params and replay policy
 * are copied (the run's identity stays the same), and its methods run on the executor itself,
 * whose private state a wrapper could not reach. `executeTracked` is what the loop calls on a
 * registry executor.
 */
function countingExecutor(ex: ActionExecutor, count: (ctx: ExecuteContext) => void): ActionExecutor {
  const wrapper = Object.create(ex) as object;
  const own = (name: string, value: unknown): void => {
    Object.defineProperty(wrapper, name, { value, enumerable: true });
  };
  const methods = ex as unknown as Record<string, unknown>;
  for (const name of ['execute', 'executeTracked']) {
    const method = methods[name];
    if (typeof method !== 'function') continue;
    own(name, (action: Action, ctx: ExecuteContext, ...rest: unknown[]): unknown => {
      count(ctx);
      return method.call(ex, action, ctx, ...rest);
    });
  }
  // Asked, not counted: whether a call runs a sub-agent.
  if (typeof methods['runsChild'] === 'function') own('runsChild', (methods['runsChild'] as Function).bind(ex));
  if (typeof ex.needsApproval === 'function') own('needsApproval', ex.needsApproval.bind(ex));
  if (ex.params !== undefined) own('params', ex.params);
  if (ex.replayPolicy !== undefined) own('replayPolicy', ex.replayPolicy);
  return wrapper as ActionExecutor;
}
