/**
 * Trials of the browser-kill suite: an uninterrupted reference run, then runs whose Chromium is
 * SIGKILLed at a chosen moment and relaunched on the same profile, and the checks each must pass.
 * Shared by the vitest suite and `npm run fuzz:browser-kill`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { LogRecord, StepRecord } from '../../../src/core/index.ts';
import { killBrowser, launchBrowser, makeProfile, removeProfile } from './kill-harness.ts';
import type { Browser, KillServer, Message } from './kill-harness.ts';
import { random as seeded } from '../../support/random.ts';

const BOOT_MS = 30_000;
const END_MS = 40_000;

/** Model and tool time per call in the page, in ms. */
export const PACE = 'think=30&tool=40';

/** What the durable log said at the kill: where the run was when Chromium died. */
export type Phase =
  | 'not started'
  | 'step boundary'
  | 'model call in flight'
  | 'model reply stored'
  | 'safe action in flight'
  | 'never action in flight'
  | 'ended';

/**
 * When to SIGKILL: a delay after the page booted, the moment the server records the `nth` side
 * effect of `tool`, or the moment it receives the acknowledgement of the write naming `resultId`
 * (an action intent: durable, and its tool not started yet).
 */
export type Trigger =
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'effect'; readonly tool: string; readonly nth: number }
  | { readonly kind: 'ack'; readonly resultId: string };

/** The uninterrupted run, and its figures. */
export type Reference = {
  readonly steps: readonly unknown[];
  readonly stopReason: string;
  /** Store writes acknowledged in the run (counted, never assumed). */
  readonly writes: number;
  /** `tool(args)` of every side effect, in order. */
  readonly effects: readonly string[];
  /** From the page's boot report to its end report. */
  readonly durationMs: number;
};

/** One trial, as run and as checked. */
export type TrialOutcome = {
  readonly runId: string;
  readonly trigger: string;
  readonly killedAfterMs: number;
  readonly phase: Phase;
  readonly stopReason: string | null;
  /** For a kill that left a `never` action in flight: whether it had in fact run (its effect reached the server). */
  readonly inFlightNeverRan: boolean | null;
  /** How the relaunched page answered the settle request of that action (`executed` / `retry`), else null. */
  readonly settledAs: string | null;
  /**
   * Acknowledged non-barrier records (`isBarrier` false: `run_started`, a safe model-call intent, a
   * result written alone) not found after the kill: the store may hold them until its next write
   * (decisions 0040, 0043), so their loss is allowed, and counted.
   */
  readonly nonBarrierLost: number;
  /** How many times each side effect (`tool(args)`) reached the server, over both launches. */
  readonly effectCounts: Readonly<Record<string, number>>;
  readonly stragglers: number;
  readonly relaunchToBootMs: number | null;
  readonly relaunchToDrivingMs: number | null;
  readonly relaunchToEndMs: number | null;
  readonly problems: readonly string[];
};

/** Everything the checks look at, gathered from the server's messages. */
export type TrialEvidence = {
  readonly atKill: readonly LogRecord[];
  readonly final: {
    readonly stopReason: string;
    readonly log: readonly LogRecord[];
    readonly meta: { readonly records: number; readonly ended: boolean } | null;
  } | null;
  readonly errors: readonly string[];
  /** Write acknowledgements the killed browser sent: a record's label, and `barrier` (`isBarrier`, or true for a joint write). */
  readonly acks: readonly Readonly<Record<string, unknown>>[];
  readonly effects: readonly { readonly launch: number; readonly tool: string; readonly args: unknown }[];
};

const keyOf = (r: Readonly<Record<string, unknown>>): string =>
  `${String(r['kind'])}:${String(r['resultId'] ?? r['stepIndex'] ?? '')}`;

function labelOf(rec: LogRecord): string {
  if (rec.kind === 'intent' || rec.kind === 'result' || rec.kind === 'input_request' || rec.kind === 'input')
    return keyOf({ kind: rec.kind, resultId: rec.resultId });
  if (rec.kind === 'step') return keyOf({ kind: 'step', stepIndex: rec.step.stepIndex });
  return keyOf({ kind: rec.kind });
}

/** Where the run stood, judged from the log the relaunched page found. */
export function phaseOf(log: readonly LogRecord[]): Phase {
  const last = log.at(-1);
  if (!last) return 'not started';
  if (last.kind === 'run_ended') return 'ended';
  if (last.kind === 'result') return 'model reply stored';
  if (last.kind === 'intent')
    return last.intent === 'model_call'
      ? 'model call in flight'
      : `${last.intent === 'action' ? last.replayPolicy : 'never'} action in flight`;
  return 'step boundary';
}

/** A step without its timestamps: what must equal the reference. */
export function timeless(step: StepRecord): unknown {
  const { startedAt: _s, endedAt: _e, ...rest } = step;
  return rest;
}

const stepsOf = (log: readonly LogRecord[]): unknown[] =>
  log.flatMap((r) => (r.kind === 'step' ? [timeless(r.step)] : []));
const effectName = (e: { tool: string; args: unknown }): string => `${e.tool}(${JSON.stringify(e.args)})`;

function intentFor(log: readonly LogRecord[], e: { tool: string; args: unknown }): boolean {
  return log.some(
    (r) =>
      r.kind === 'intent' &&
      r.intent === 'action' &&
      r.decision.action.kind === 'tool_call' &&
      r.decision.action.name === e.tool &&
      isDeepStrictEqual(r.decision.action.arguments, e.args),
  );
}

/**
 * Every acknowledged barrier is in the log the relaunch found; an acknowledged non-barrier may be
 * missing (counted), but only if nothing acknowledged after it survived: a store may lose what it
 * held, never out of order. The resume kept the found log as it was.
 */
function checkDurable(ev: TrialEvidence, problems: string[]): number {
  const found = new Set(ev.atKill.map(labelOf));
  const lost: string[] = [];
  for (const ack of ev.acks) {
    const key = keyOf(ack);
    if (found.has(key)) {
      for (const earlier of lost)
        problems.push(`acknowledged write ${earlier} is missing although the later ${key} survived`);
      lost.length = 0;
    } else if (ack['barrier'] === false) lost.push(key);
    else problems.push(`acknowledged write ${key} is missing after the kill`);
  }
  if (ev.final && !isDeepStrictEqual(ev.final.log.slice(0, ev.atKill.length), ev.atKill))
    problems.push('the resume changed the log it found');
  return ev.acks.filter((a) => a['barrier'] === false && !found.has(keyOf(a))).length;
}

/** Each `never` effect happened at most once, after its intent was durable; `safe` ones are free. */
function checkEffects(ev: TrialEvidence, ref: Reference, problems: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of ev.effects) counts.set(effectName(e), (counts.get(effectName(e)) ?? 0) + 1);
  for (const e of ev.effects.filter((x) => x.tool === 'charge')) {
    if (ev.final && !intentFor(ev.final.log, e)) problems.push(`${effectName(e)} ran with no intent in the log`);
    if (e.launch === 1 && !intentFor(ev.atKill, e)) problems.push(`${effectName(e)} ran before its intent was durable`);
  }
  for (const [name, n] of counts)
    if (name.startsWith('charge(') && n > 1) problems.push(`never-replay ${name} ran ${n} times`);
  for (const name of ref.effects)
    if (!(counts.get(name) ?? 0) && ev.final?.stopReason === 'final_answer') problems.push(`${name} never ran`);
  return counts;
}

/** The run's end: the uninterrupted trajectory, whatever the kill left (a never action in flight is settled). */
function checkEnd(ev: TrialEvidence, ref: Reference, problems: string[]): void {
  const final = ev.final;
  if (!final) return void problems.push('the run did not end after the relaunch');
  const kinds = final.log.map((r) => r.kind);
  if (
    kinds[0] !== 'run_started' ||
    kinds.at(-1) !== 'run_ended' ||
    kinds.filter((k) => k === 'run_started' || k === 'run_ended').length !== 2
  ) {
    problems.push(`malformed log: ${kinds.join(',')}`);
  }
  if (!final.meta || final.meta.records !== final.log.length || !final.meta.ended)
    problems.push(`run meta ${JSON.stringify(final.meta)} disagrees with a log of ${final.log.length} records`);
  if (final.stopReason !== 'final_answer') return void problems.push(`unexpected stop reason ${final.stopReason}`);
  if (!isDeepStrictEqual(stepsOf(final.log), ref.steps))
    problems.push('the trajectory differs from the uninterrupted run');
}

/** The `never` action in flight at the kill: whether its side effect had reached the server then. */
function ranAtKill(ev: TrialEvidence): boolean | null {
  const last = ev.atKill.at(-1);
  if (
    last?.kind !== 'intent' ||
    last.intent !== 'action' ||
    last.replayPolicy !== 'never' ||
    last.decision.action.kind !== 'tool_call'
  )
    return null;
  const { name, arguments: args } = last.decision.action;
  return ev.effects.some((e) => e.launch === 1 && e.tool === name && isDeepStrictEqual(e.args, args));
}

/**
 * A settle request exactly when the kill left a `never` action in flight, answered as the outside
 * world says: `executed` when its effect had happened, `retry` when not. Its reply kind, or null.
 */
function checkSettle(ev: TrialEvidence, phase: Phase, ran: boolean | null, problems: string[]): string | null {
  const log = ev.final?.log ?? [];
  const requests = log.flatMap((r) => (r.kind === 'input_request' && r.request.kind === 'settle' ? [r] : []));
  if (phase !== 'never action in flight') {
    if (requests.length > 0) problems.push(`a settle request although the kill left: ${phase}`);
    return null;
  }
  if (!ev.final) return null;
  if (requests.length !== 1) {
    problems.push(`${requests.length} settle requests although one never action was in flight`);
    return null;
  }
  const reply = log.find((r) => r.kind === 'input' && r.resultId === requests[0]!.resultId);
  const kind = reply?.kind === 'input' ? reply.reply.kind : null;
  const expected = ran ? 'executed' : 'retry';
  if (kind !== expected)
    problems.push(
      `the settle request was answered ${kind ?? 'never'}, although the action had ${ran ? '' : 'not '}run`,
    );
  return kind;
}

/** Check one trial's evidence; pure, so the checks themselves are tested on doctored evidence. */
export function checkTrial(
  ev: TrialEvidence,
  ref: Reference,
): {
  problems: string[];
  phase: Phase;
  nonBarrierLost: number;
  inFlightNeverRan: boolean | null;
  settledAs: string | null;
  counts: Map<string, number>;
} {
  const problems = ev.errors.map((e) => `page reported: ${e}`);
  const phase = phaseOf(ev.atKill);
  const nonBarrierLost = checkDurable(ev, problems);
  const counts = checkEffects(ev, ref, problems);
  checkEnd(ev, ref, problems);
  const inFlightNeverRan = ranAtKill(ev);
  const settledAs = checkSettle(ev, phase, inFlightNeverRan, problems);
  return { problems, phase, nonBarrierLost, inFlightNeverRan, settledAs, counts };
}

const isReport =
  (runId: string, launch: number, ...types: string[]) =>
  (m: Message): boolean =>
    m.runId === runId && m.launch === launch && m.path === '/report' && types.includes(String(m.body['type']));

/** The page's URL for one launch (`extra`: more query, e.g. `barrier=skip`). */
export const pageUrl = (server: KillServer, runId: string, launch: number, extra = ''): string =>
  `${server.origin}/?run=${runId}&launch=${launch}&${PACE}${extra ? `&${extra}` : ''}`;

/** Run once without a kill: the trajectory, side effects and duration every trial is held to. */
export async function referenceRun(server: KillServer, runId: string): Promise<Reference> {
  const profile = await makeProfile();
  const browser = launchBrowser(profile, pageUrl(server, runId, 1));
  try {
    const boot = await server.until(isReport(runId, 1, 'boot'), BOOT_MS, 'the reference page to boot');
    const end = await server.until(isReport(runId, 1, 'ended', 'error'), END_MS, 'the reference run to end');
    if (end.body['type'] !== 'ended') throw new Error(`reference run failed: ${String(end.body['message'])}`);
    const mine = server.of(runId, 1);
    return {
      steps: stepsOf(end.body['log'] as LogRecord[]),
      stopReason: String(end.body['stopReason']),
      writes: mine.filter((m) => m.path === '/ack').length,
      effects: mine
        .filter((m) => m.path === '/effect')
        .map((m) => effectName({ tool: String(m.body['tool']), args: m.body['args'] })),
      durationMs: end.at - boot.at,
    };
  } finally {
    await killBrowser(browser);
    await removeProfile(profile);
  }
}

/** Wait for the trigger; kill the browser group synchronously on an effect trigger. */
async function awaitTrigger(server: KillServer, runId: string, browser: Browser, trigger: Trigger): Promise<void> {
  if (trigger.kind === 'delay') return void (await new Promise((ok) => setTimeout(ok, trigger.ms)));
  let seen = 0;
  const done = new AbortController();
  const fires = (m: Message): boolean =>
    trigger.kind === 'ack'
      ? m.path === '/ack' && m.body['resultId'] === trigger.resultId
      : m.path === '/effect' && m.body['tool'] === trigger.tool && ++seen === trigger.nth;
  const hit = new Promise<void>((ok) => {
    server.onMessage = (m) => {
      if (m.runId !== runId || !fires(m)) return;
      // Killed before the server answers: the page never learns the effect happened.
      process.kill(-browser.pid, 'SIGKILL');
      ok();
    };
  });
  // A run that ends (or fails) before the trigger is killed after its end: a trial all the same.
  const over = server.until(isReport(runId, 1, 'ended', 'error'), END_MS, 'the trigger effect', done.signal);
  try {
    await Promise.race([hit, over]);
  } finally {
    server.onMessage = null;
    done.abort(new Error('the trigger fired'));
    // Its only outcomes now are the abort above or the end we raced against: neither matters.
    await over.catch(() => undefined);
  }
}

const describeTrigger = (t: Trigger): string =>
  t.kind === 'delay'
    ? `after ${Math.round(t.ms)} ms`
    : t.kind === 'ack'
      ? `at ack of ${t.resultId}`
      : `at ${t.tool} effect #${t.nth}`;

/** One trial: launch, kill at `trigger`, relaunch on the same profile, let the page resume, check. */
export async function runTrial(
  server: KillServer,
  ref: Reference,
  runId: string,
  trigger: Trigger,
  extraQuery = '',
): Promise<TrialOutcome> {
  const profile = await makeProfile();
  let browser: Browser | null = launchBrowser(profile, pageUrl(server, runId, 1, extraQuery));
  try {
    const boot = await server.until(isReport(runId, 1, 'boot'), BOOT_MS, 'the page to boot');
    await awaitTrigger(server, runId, browser, trigger);
    const killedAfterMs = performance.now() - boot.at;
    const stragglers = await killBrowser(browser);
    browser = null;
    const relaunchedAt = performance.now();
    browser = launchBrowser(profile, pageUrl(server, runId, 2, extraQuery));
    const rebooted = await server
      .until(isReport(runId, 2, 'boot', 'error'), BOOT_MS, 'the relaunched page to boot')
      .catch(() => null);
    const end = rebooted
      ? await server
          .until(isReport(runId, 2, 'ended', 'error'), END_MS, 'the run to end after the relaunch')
          .catch(() => null)
      : null;
    const driving = server.of(runId, 2).find((m) => m.path === '/report' && m.body['type'] === 'started');
    const mine = server.of(runId);
    const evidence: TrialEvidence = {
      atKill: (rebooted?.body['log'] as LogRecord[] | undefined) ?? [],
      final: end?.body['type'] === 'ended' ? (end.body as unknown as TrialEvidence['final']) : null,
      errors: mine
        .filter((m) => m.path === '/report' && m.body['type'] === 'error')
        .map((m) => `launch ${m.launch}: ${String(m.body['message'])}`),
      acks: mine.filter((m) => m.path === '/ack' && m.launch === 1).map((m) => m.body),
      effects: mine
        .filter((m) => m.path === '/effect')
        .map((m) => ({ launch: m.launch, tool: String(m.body['tool']), args: m.body['args'] })),
    };
    const checked = checkTrial(evidence, ref);
    if (!rebooted) checked.problems.push('the relaunched page never booted');
    return {
      runId,
      trigger: describeTrigger(trigger),
      killedAfterMs,
      phase: checked.phase,
      stopReason: evidence.final?.stopReason ?? null,
      inFlightNeverRan: checked.inFlightNeverRan,
      settledAs: checked.settledAs,
      nonBarrierLost: checked.nonBarrierLost,
      effectCounts: Object.fromEntries(checked.counts),
      stragglers,
      relaunchToBootMs: rebooted ? rebooted.at - relaunchedAt : null,
      relaunchToDrivingMs: driving ? driving.at - relaunchedAt : null,
      relaunchToEndMs: end ? end.at - relaunchedAt : null,
      problems: checked.problems,
    };
  } finally {
    if (browser) await killBrowser(browser);
    await removeProfile(profile);
  }
}

/**
 * `n` kill delays spread over a run of `durationMs` (one uniform draw in each of `n` equal slices,
 * shuffled), so a handful of trials still covers the whole run rather than clustering by chance.
 */
export function planDelays(n: number, seed: number, durationMs: number): number[] {
  const rand = seeded(seed);
  const delays = Array.from({ length: n }, (_, i) => ((i + rand()) / n) * durationMs);
  for (let i = delays.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [delays[i], delays[j]] = [delays[j] as number, delays[i] as number];
  }
  return delays;
}
