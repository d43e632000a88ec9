/**
 * Replies and upgrades the viewer carries out with the user's agent (`polyloop view <dir>
 * --agent <module>`), through `resume` — the code path every other reply takes. The module
 * exports the agent; each run's request is rebuilt from its log (`resume(agent, runId, …)`,
 * the agent's defaults giving the tools and executor). The older module form, a function of
 * `{ runId, dir }` giving `{ agent, request }`, still works (decision 0060).
 * @module
 */
import { realpath } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { isPolyLoopError, resume } from '../../core/index.ts';
import { checkOptionKeys, inputReplyProblem } from '../../core/internal-entry.ts';
import type { AgentDefinition, InputReply, LogRecord, ResumeOptions, RunRequest, RunResult } from '../../core/index.ts';
import type { InputAccepted, UpgradeAccepted } from '../../core/internal-entry.ts';
import type { LogReading } from './view-model.ts';
import type { ViewAnswer } from './view-source.ts';
import { ViewerRefusedError } from './view-source.ts';
import type { Track, ViewerDrives } from './view-turns.ts';

/** What the older form of agent module gives for a run: the definition and the request `resume` needs. */
export type AgentForRun = { readonly agent: AgentDefinition; readonly request: RunRequest };

/** The older form of agent module's default export: the agent and request of a run in `dir`. */
export type AgentFactory = (ctx: {
  readonly runId: string;
  readonly dir: string;
}) => AgentForRun | Promise<AgentForRun>;

/** What `--agent` gives the viewer: the agent itself, or the older factory of `{ agent, request }`. */
export type ViewerAgent = AgentDefinition | AgentFactory;

/** Whether `value` is an agent definition (`defineAgent`'s result, from any copy of the library). */
export function isAgentDefinition(value: unknown): value is AgentDefinition {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const isObject = (x: unknown): boolean => typeof x === 'object' && x !== null;
  return isObject(v['params']) && isObject(v['store']) && isObject(v['model']);
}

const EXPORT_NOW =
  'export the agent: export default defineAgent({ …, store: new FileStore({ dir }), ' +
  'defaults: { tools, executor: tools.executor() } })';

/**
 * Refuses (`ViewerRefusedError`) an agent the viewer could not resume runs of `dir` with: one
 * without the tools and executor a resume by run id takes from its defaults, or one whose
 * FileStore writes to another directory (its replies would land in logs this viewer never reads).
 */
export async function checkViewerAgent(agent: unknown, dir: string): Promise<void> {
  if (typeof agent === 'function') return;
  if (!isAgentDefinition(agent)) throw new ViewerRefusedError(`the agent module must give an agent: ${EXPORT_NOW}`);
  const missing = (['tools', 'executor'] as const).filter((k) => agent.defaults?.[k] === undefined);
  if (missing.length > 0) {
    throw new ViewerRefusedError(
      `your agent has no ${missing.map((k) => `defaults.${k}`).join(' or ')}: the viewer resumes a run by its id ` +
        `and the log keeps no code, so the tools and executor come from the agent's defaults (${EXPORT_NOW})`,
    );
  }
  const storeDir = (agent.store as { readonly dir?: unknown }).dir;
  if (typeof storeDir !== 'string') return;
  const real = (p: string): Promise<string> => realpath(p).catch(() => resolvePath(p));
  if ((await real(storeDir)) !== (await real(dir))) {
    throw new ViewerRefusedError(
      `your agent's store writes to ${storeDir}, not to ${dir}, the directory this viewer shows: ` +
        `give it new FileStore({ dir: '${dir}' }), or view its directory`,
    );
  }
}

/** How the viewer reaches the run and reports what happens after its answer. */
export type CarryContext = {
  readonly dir: string;
  readonly runId: string;
  readonly readRun: (runId: string) => Promise<{ reading: LogReading } | null>;
  readonly log: (line: string) => void;
  /** The replies this viewer is carrying out (view-turns.ts). */
  readonly drives: ViewerDrives;
};

type Resumer = (opts: ResumeOptions) => Promise<RunResult>;

/**
 * Carry out `work` in turn with this viewer's other replies to the run (see view-turns.ts): a reply
 * to a request still open waits for the resumes carrying replies to the step's other requests.
 */
function inTurn(
  ctx: CarryContext,
  resultId: string | null,
  work: (track: Track) => Promise<ViewAnswer>,
): Promise<ViewAnswer> {
  const isOpen = async (): Promise<boolean> =>
    (await ctx.readRun(ctx.runId))?.reading.view.openRequests.some((r) => r.resultId === resultId) === true;
  return ctx.drives.carry(ctx.runId, resultId, isOpen, work);
}

/** `resume` for this run with the user's agent, or the answer saying why there is none. */
async function resumerFor(agent: ViewerAgent, ctx: CarryContext): Promise<Resumer | ViewAnswer> {
  if (typeof agent !== 'function') return (opts) => resume(agent, ctx.runId, opts);
  let made: unknown;
  try {
    made = await agent({ runId: ctx.runId, dir: ctx.dir });
  } catch (e) {
    return { status: 500, message: `your agent module failed for run ${JSON.stringify(ctx.runId)}: ${errorText(e)}` };
  }
  const given = made as Partial<AgentForRun> | null;
  if (isAgentDefinition(made) || !isAgentDefinition(given?.agent) || typeof given?.request !== 'object') {
    const message = `your agent module's function must give { agent, request } (the older form); or ${EXPORT_NOW}`;
    return { status: 500, message };
  }
  const { agent: a, request } = given as AgentForRun;
  return (opts) => resume(a, request, opts);
}

/** The log's records of `kind` for the run, as it stands now. */
type RecordOf<K extends LogRecord['kind']> = Extract<LogRecord, { kind: K }>;

async function recordsOf<K extends LogRecord['kind']>(ctx: CarryContext, kind: K): Promise<RecordOf<K>[]> {
  const records = (await ctx.readRun(ctx.runId))?.reading.records ?? [];
  return records.filter((r): r is RecordOf<K> => r.kind === kind);
}

/**
 * A test of whether `reply` has landed since now: a reply already in the log (the run went on)
 * must not read as this one landing, nor may another person's reply that lands while this one
 * waits for the run's lock.
 */
async function replyLanding(ctx: CarryContext, reply: InputReply): Promise<() => Promise<boolean>> {
  const mine = sameJson(reply);
  const ofRequest = async (): Promise<RecordOf<'input'>[]> =>
    (await recordsOf(ctx, 'input')).filter((r) => r.resultId === reply.resultId);
  const before = (await ofRequest()).length;
  return async () => (await ofRequest()).slice(before).some((r) => mine(r.reply));
}

type Carried = { readonly landed: boolean; readonly error: unknown };

/**
 * Wait until `landed` (what resume writes first is in the log: the answer goes out and the run
 * goes on in the background, to its end or its next question) or resume settles without it.
 */
async function carry(
  ctx: CarryContext,
  resuming: Promise<RunResult>,
  landed: () => Promise<boolean>,
): Promise<Carried> {
  const driving = resuming.then(
    () => null,
    (e: unknown) => e,
  );
  for (;;) {
    const tick = new Promise<null>((ok) => setTimeout(ok, 50, null));
    const settled = await Promise.race([driving.then((e) => ({ e })), tick]);
    // resume refuses before it writes: such a refusal is the answer whatever else landed.
    if (settled !== null && isRefusal(settled.e)) return { landed: false, error: settled.e };
    if (await landed()) {
      void driving.then((e) => {
        if (e === null) return;
        ctx.log(`polyloop view: run ${JSON.stringify(ctx.runId)} failed after the reply landed: ${errorText(e)}`);
      });
      return { landed: true, error: null };
    }
    if (settled !== null) return { landed: false, error: settled.e };
  }
}

/**
 * Carry out `reply` (to any open request of the run) with the user's agent: 202 once it is in the
 * log, else why resume wrote nothing.
 */
export function answerWith(agent: ViewerAgent, ctx: CarryContext, reply: InputReply): Promise<ViewAnswer> {
  return inTurn(ctx, reply.resultId, (track) => answerNow(agent, ctx, reply, track));
}

async function answerNow(agent: ViewerAgent, ctx: CarryContext, reply: InputReply, track: Track): Promise<ViewAnswer> {
  const resumer = await resumerFor(agent, ctx);
  if (typeof resumer !== 'function') return resumer;
  const landed = await replyLanding(ctx, reply);
  const resuming = resumer({ input: reply });
  track(resuming);
  const out = await carry(ctx, resuming, landed);
  if (!out.landed) return (await stoppedFirst(ctx)) ?? refusal(out.error, ctx, agent);
  const body: InputAccepted = { runId: ctx.runId, resultId: reply.resultId };
  return { status: 202, message: 'the reply is in the log; the run goes on', body };
}

/** A reply resume did not carry out because a stop ended the run first: 409 saying so, else null. */
async function stoppedFirst(ctx: CarryContext): Promise<ViewAnswer | null> {
  const stop = (await ctx.readRun(ctx.runId))?.reading.view.ended?.stopRequest;
  if (stop === undefined) return null;
  const why = stop.reason === undefined ? '' : ` (${stop.reason})`;
  return { status: 409, message: `the run was stopped${why} before the reply landed: it was not carried out` };
}

/**
 * With the user's agent, end a run asked to stop that no process drives: a resume finds the stop
 * at once and writes `run_ended` alone — no model call, no action, whatever the run awaited (and
 * whatever its code is now). Resolves whether the run ended so; a run another driver took in the
 * meantime ends by that driver.
 */
export async function endStoppedWith(agent: ViewerAgent, ctx: CarryContext): Promise<boolean> {
  const resumer = await resumerFor(agent, ctx);
  if (typeof resumer !== 'function') return false;
  try {
    const result = await resumer({});
    return result.stopRequest !== undefined;
  } catch (e) {
    if (!isPolyLoopError(e, 'run_locked'))
      ctx.log(`polyloop view: run ${JSON.stringify(ctx.runId)} was not ended after its stop: ${errorText(e)}`);
    return false;
  }
}

/** An upgrade as the page POSTs it. */
export type UpgradeBody = { readonly reason: string; readonly input: InputReply | null };

const UPGRADE_KEYS = { reason: true, input: true } as const;

/** The upgrade `raw` asks for, or the problem with it (unknown keys, no reason, a malformed reply). */
export function upgradeBody(raw: unknown): UpgradeBody | string {
  try {
    checkOptionKeys(raw, UPGRADE_KEYS, 'an upgrade');
  } catch (e) {
    return errorText(e);
  }
  const { reason, input } = raw as { reason?: unknown; input?: unknown };
  if (typeof reason !== 'string' || reason.trim() === '') {
    return 'an upgrade needs a reason: a non-empty string saying why the run goes on under new code';
  }
  if (input === undefined || input === null) return { reason, input: null };
  const problem = inputReplyProblem(input);
  return problem === null ? { reason, input: input as InputReply } : `the upgrade's input: ${problem}`;
}

/**
 * Move a run that waits for a person onto the agent's current code, as `resume(agent, runId,
 * { upgrade: { reason }, input })`: 202 once the upgrade (and the reply, when one is given) is in
 * the log. A run that ended, or waits for no one, is not upgraded here; nothing to upgrade is a 409.
 */
export function upgradeWith(agent: ViewerAgent, ctx: CarryContext, body: UpgradeBody): Promise<ViewAnswer> {
  return inTurn(ctx, body.input?.resultId ?? null, (track) => upgradeNow(agent, ctx, body, track));
}

async function upgradeNow(agent: ViewerAgent, ctx: CarryContext, body: UpgradeBody, track: Track): Promise<ViewAnswer> {
  const view = (await ctx.readRun(ctx.runId))?.reading.view;
  const id = JSON.stringify(ctx.runId);
  if (view?.state === 'ended') {
    return { status: 409, message: `run ${id} has ended, and an ended run is never upgraded` };
  }
  if (view?.state !== 'awaiting_input') {
    const how = 'carry this one on from your program with resume(agent, runId, { upgrade: { reason } })';
    return { status: 409, message: `run ${id} waits for no person: the viewer upgrades a run it can answer; ${how}` };
  }
  const resumer = await resumerFor(agent, ctx);
  if (typeof resumer !== 'function') return resumer;
  const before = (await recordsOf(ctx, 'upgrade')).length;
  const upgraded = async (): Promise<boolean> =>
    (await recordsOf(ctx, 'upgrade')).slice(before).some((u) => u.reason === body.reason);
  const landed = body.input === null ? upgraded : await replyLanding(ctx, body.input);
  const reply = body.input === null ? {} : { input: body.input };
  const opts: ResumeOptions = { upgrade: { reason: body.reason }, ...reply };
  const resuming = resumer(opts);
  track(resuming);
  const out = await carry(ctx, resuming, landed);
  if (out.landed) {
    const answered = body.input === null ? {} : { resultId: body.input.resultId };
    const done: UpgradeAccepted = { runId: ctx.runId, upgraded: await upgraded(), ...answered };
    return { status: 202, message: 'the upgrade is in the log', body: done };
  }
  if (out.error === null && body.input === null) {
    const message = `nothing to upgrade: your agent module fits run ${id} as it stands; reply as usual`;
    return { status: 409, message };
  }
  return refusal(out.error, ctx, agent);
}

/** A test of whether a value is `value` as JSON, whatever the order of object keys. */
function sameJson(value: unknown): (other: unknown) => boolean {
  const byKey = ([a]: [string, unknown], [b]: [string, unknown]): number => (a < b ? -1 : a > b ? 1 : 0);
  const canon = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canon);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v)
        .sort(byKey)
        .map(([k, x]) => [k, canon(x)]),
    );
  };
  const text = JSON.stringify(canon(value));
  return (other) => JSON.stringify(canon(other)) === text;
}

const REFUSALS = [
  'invalid_input',
  'run_locked',
  'run_identity_mismatch',
  'invalid_request',
  'upgrade_refused',
  'run_not_found',
] as const;

/** Whether resume refused before writing anything (it did not fit, or another driver holds the run). */
function isRefusal(e: unknown): boolean {
  return REFUSALS.some((code) => isPolyLoopError(e, code));
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Why resume wrote nothing, as an HTTP answer the page can act on. */
function refusal(e: unknown, ctx: CarryContext, agent: ViewerAgent): ViewAnswer {
  const message = errorText(e);
  const id = JSON.stringify(ctx.runId);
  if (e === null) return { status: 409, message: 'the run went on without this reply' };
  // A reply of the wrong kind, or edited arguments refused (every problem listed): the reply is wrong, not the moment.
  if (isPolyLoopError(e, 'invalid_input')) return { status: /accepts|arguments/.test(message) ? 400 : 409, message };
  if (isPolyLoopError(e, 'run_locked')) return { status: 409, message: `another process drives run ${id}: ${message}` };
  if (isPolyLoopError(e, 'upgrade_refused')) return { status: 409, message, code: 'upgrade_refused' };
  if (isPolyLoopError(e, 'run_identity_mismatch')) {
    if ((e as { ended?: unknown }).ended === true) return { status: 409, message };
    const code = 'run_identity_mismatch';
    return { status: 400, message: `your agent module does not fit this run: ${message}`, code };
  }
  if (isPolyLoopError(e, 'run_not_found')) {
    const where = `its store must be the FileStore on ${ctx.dir}, the directory this viewer shows`;
    return { status: 400, message: `your agent's store has no run ${id}: ${where}` };
  }
  if (isPolyLoopError(e, 'invalid_request')) {
    const byId = typeof agent !== 'function' && /predates stored requests/.test(message);
    const older = byId ? '; the older module form, ({ runId, dir }) => ({ agent, request }), can answer it' : '';
    return { status: 400, message: `your agent module does not fit this run: ${message}${older}` };
  }
  return { status: 500, message };
}
