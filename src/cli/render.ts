/**
 * How the `polyloop` command prints what `readRunLog` says: the one-line state, steps, the
 * in-flight step, and JSON rows. Everything that comes from a log is data, never a terminal
 * command: text lines go through {@link oneLine} before they reach the terminal.
 * @module
 */
import { acceptedReplies, childRunsOf } from '../core/index.ts';
import { callsInFlight, openCount } from '../viewer/server/calls.ts';
import type { CallInFlightSummary } from '../viewer/server/calls.ts';
import { askedIn } from '../viewer/server/run-tree.ts';
import type { Action, CallsInFlight, InFlightStep, InputRequest, RunLogView, StepRecord } from '../core/index.ts';

/** Where the CLI reads and writes. */
export type CliIo = {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Whether `out` is a terminal (then an export's raw control characters are shown escaped). */
  readonly outIsTerminal?: boolean;
  /** All of standard input (`polyloop import <dir> -`); default: `process.stdin`. */
  readonly stdin?: () => Promise<Uint8Array>;
};

/** Exit codes of the `polyloop` command. */
export const EXIT = { ok: 0, notFound: 1, usage: 2, corrupt: 3 } as const;

const OBSERVATION_CHARS = 160;
const ACTION_CHARS = 100;

/**
 * Where a run stands, in one line: `ended (final_answer)`, `at step boundary (resumable)`,
 * `in flight at step 3: action add({"a":1}) — will be replayed (safe)`, `awaiting input at step
 * 1: approval of note({"text":"hi"}) (s1.input; replies approve, deny, cancel)` (a step with several
 * calls: `awaiting input at step 1 (2 requests): …; …`, each request so), … With a live driver
 * (`driverPid`), what resume would do is left out: the run is not interrupted, it is running.
 */
export function stateLine(view: RunLogView, driverPid: number | null): string {
  if (view.state === 'ended') return `ended (${view.ended?.stopReason ?? '?'})`;
  if (view.state === 'not_started') return 'not started (no run_started record)';
  const where = position(view);
  if (driverPid !== null) return `running (pid ${driverPid}) — ${where}`;
  if (view.state === 'at_boundary') return `${where} (resumable)`;
  if (view.state === 'awaiting_input') return where;
  return `${where} — ${resolutionText(view.inFlight as InFlightStep)}`;
}

function position(view: RunLogView): string {
  if (view.state === 'at_boundary') return 'at step boundary';
  if (view.state === 'awaiting_input') {
    const open = view.openRequests;
    const [p] = open;
    if (!p) return 'awaiting input';
    const asked = (r: InputRequest): string => `${askedText(r)} (${r.resultId}; replies ${repliesOf(r).join(', ')})`;
    if (open.length === 1) return `awaiting input at step ${p.stepIndex}: ${asked(p)}`;
    return `awaiting input at step ${p.stepIndex} (${open.length} requests): ${open.map(asked).join('; ')}`;
  }
  const f = view.inFlight as InFlightStep;
  if (f.target === 'action') return `in flight at step ${f.stepIndex}: action ${actionText(f)}`;
  if (f.resolution === 'reinterpret') return `model reply stored at step ${f.stepIndex}, not yet interpreted`;
  return `model call in flight at step ${f.stepIndex}`;
}

function resolutionText(f: InFlightStep): string {
  switch (f.resolution) {
    case 'replay_action':
      return 'will be replayed (safe)';
    case 'reissue_model':
      return 'will be re-issued';
    case 'reinterpret':
      return 'will be interpreted on resume (nothing ran yet)';
    case 'settle':
      return (
        `a never ${f.target === 'action' ? 'action' : 'model call'} was in flight: ` +
        'resume asks a person to settle it'
      );
    case 'apply_input':
      return `a reply landed (${f.input?.reply.kind ?? '?'} to ${f.request?.resultId ?? '?'}): resume carries it out`;
    case 'run_calls':
      return (
        'resume runs each call without an outcome (again if it may have run and is safe; ' +
        'a person settles a never one)'
      );
    default:
      // A resolution added after this CLI (a newer core): still a line, naming it.
      return `resume carries it on (${String(f.resolution)})`;
  }
}

/**
 * The in-flight action (announced, or awaiting approval) as `name(arguments as JSON)` or `code: source`, clipped;
 * a step with several calls as `3 calls: read(…), …`.
 */
function actionText(f: InFlightStep): string {
  if (f.calls) {
    const reprs = f.calls.intent.decision.calls.map((c) => c.trajectoryRepr).join(', ');
    return clip(`${f.calls.calls.length} calls: ${reprs}`, ACTION_CHARS);
  }
  const action = f.actionIntent?.decision.action ?? f.request?.request.decision?.action;
  return action === undefined ? '?' : clip(describeAction(action), ACTION_CHARS);
}

/** The replies an open request accepts, in the order core offers them. */
export function repliesOf(p: InputRequest): readonly string[] {
  return acceptedReplies(p);
}

/** A request as a log holds it or `pending` shows it: what `askedText` reads. */
type Asked = Pick<InputRequest, 'kind' | 'target' | 'decision' | 'child'>;

/**
 * What a request asks a person, naming the action: `approval of note({"text":"hi"})`, `settle the
 * model call`; a sub-agent's request as what it really asks and where: `approval of note(…) in
 * sub-agent run p1.s0.action`.
 */
export function askedText(request: Asked): string {
  const { runId, request: p } = askedIn(request);
  const where = runId === null ? '' : ` in sub-agent run ${runId}`;
  const action = p.decision ? clip(describeAction(p.decision.action), ACTION_CHARS) : null;
  if (p.kind === 'approval') return `approval of ${action ?? '?'}${where}`;
  if (p.kind === 'answer') return `an answer to ${action ?? '?'}${where}`;
  if (p.kind === 'child') return `a sub-agent's request${where}`;
  const settle =
    p.target === 'action' ? `settle ${action ?? '?'} (did it happen?)` : 'settle the model call (was it made?)';
  return settle + where;
}

/**
 * The open request as `show` prints it: what is asked, the action and its arguments, the replies.
 * A sub-agent's request shows what it really asks, in which run, and the parent's request the
 * reply names.
 */
export function renderPending(request: InputRequest): string[] {
  const { runId, request: p } = askedIn(request);
  const action = p.decision?.action;
  const head =
    runId === null
      ? `${p.kind} at step ${p.stepIndex} (${p.resultId})`
      : `${p.kind} at step ${p.stepIndex} of sub-agent run ${runId} (reply to ${request.resultId})`;
  const lines = [`pending      ${head}${p.target === 'model_call' ? ': the model call' : ''}`];
  if (action?.kind === 'tool_call')
    lines.push(`action       ${action.name}`, `arguments    ${clip(JSON.stringify(action.arguments) ?? '', 600)}`);
  else if (action) lines.push(`action       code: ${clip(action.source, 600)}`);
  lines.push(`replies      ${repliesOf(request).join(', ')}`);
  return lines;
}

/** The sub-agent runs a run's log names, as one marker line (none: no line). */
export function childrenLine(view: RunLogView): string[] {
  const children = childRunsOf(view);
  if (children.length === 0) return [];
  const each = children.map((c) => `${c.runId} (step ${c.stepIndex}, ${c.state.replace('_', ' ')})`);
  return [`── children: ${each.join(', ')}`];
}

function describeAction(action: Action): string {
  return action.kind === 'tool_call'
    ? `${action.name}(${JSON.stringify(action.arguments) ?? ''})`
    : `code: ${action.source}`;
}

/**
 * The in-flight step as the trajectory's last lines: what was announced, under which id and policy;
 * a step with several calls, each call on a line of its own.
 */
export function renderInFlight(f: InFlightStep): string[] {
  return f.calls ? renderCallsInFlight(f.stepIndex, f.calls) : [inFlightLine(f)];
}

function inFlightLine(f: InFlightStep): string {
  const subject = f.target === 'action' ? `action ${actionText(f)}` : 'the model call';
  if (f.request && f.resolution === 'await_input' && f.request.request.kind === 'child')
    return `#${f.stepIndex}  awaiting ${askedText(f.request.request)}  (${f.request.resultId})`;
  if (f.request && f.resolution === 'await_input')
    return `#${f.stepIndex}  awaiting ${f.request.request.kind} of ${subject}  (${f.request.resultId})`;
  if (f.request && f.input)
    return (
      `#${f.stepIndex}  reply ${f.input.reply.kind} landed for ${subject}  ` +
      `(${f.request.resultId}, not yet carried out)`
    );
  const intent = f.actionIntent ?? f.modelIntent;
  const id = `(${intent.resultId}, replay ${intent.replayPolicy})`;
  if (f.target === 'action') return `#${f.stepIndex}  in flight action ${actionText(f)}  ${id}`;
  if (f.result)
    return `#${f.stepIndex}  in flight model replied: ${clip(f.result.reply.text, OBSERVATION_CHARS)}  ${id}`;
  return `#${f.stepIndex}  in flight model call  ${id}`;
}

/** A step with several calls in flight: how many requests it awaits, then each call: resultId, action, status. */
function renderCallsInFlight(stepIndex: number, f: CallsInFlight): string[] {
  const open = openCount(f);
  const k = `${f.calls.length} calls`;
  const what = open > 0 ? `awaiting ${open} request${open === 1 ? '' : 's'} of ${k}` : `in flight ${k}`;
  const head = `#${stepIndex}  ${what}  (${f.intent.resultId})`;
  const line = (c: CallInFlightSummary): string =>
    `      ${c.resultId}  ${clip(oneLine(c.repr), ACTION_CHARS)}  [${c.status}]`;
  return [head, ...callsInFlight(f).map(line)];
}

/**
 * A step as terminal lines: header, then the observation or answer, indented; a step with several
 * calls, a line each.
 */
export function renderStep(step: StepRecord): string[] {
  const head = `#${step.stepIndex}  ${step.decision.padEnd(8)}`;
  if (step.calls) {
    return [
      `${head} ${step.calls.length} calls  [${step.actionStatus ?? '?'}]`,
      ...step.calls.map(
        (c) =>
          `      ${c.resultId}  ${clip(oneLine(c.actionRepr), ACTION_CHARS)}  [${c.status}]  ` +
          clip(oneLine(c.observation), OBSERVATION_CHARS) +
          (c.observationIsSynthetic ? ' (synthetic)' : '') +
          (c.childRunId === undefined ? '' : `  (sub-agent run ${c.childRunId})`),
      ),
    ];
  }
  switch (step.decision) {
    case 'action':
      return [
        `${head} ${clip(oneLine(step.actionRepr ?? ''), ACTION_CHARS)}  [${step.actionStatus ?? '?'}]`,
        `      observation: ${clip(oneLine(step.observation ?? ''), OBSERVATION_CHARS)}` +
          (step.observationIsSynthetic ? ' (synthetic)' : ''),
        ...(step.childRunId === undefined ? [] : [`      sub-agent run: ${step.childRunId}`]),
      ];
    case 'final':
      return [`${head} answer: ${clip(oneLine(step.finalAnswer ?? ''), OBSERVATION_CHARS)}`];
    case 'invalid':
      return [`${head} ${clip(oneLine(step.explanation ?? ''), OBSERVATION_CHARS)}`];
    default:
      return [`${head} ${clip(oneLine(step.observation ?? step.explanation ?? ''), OBSERVATION_CHARS)}`];
  }
}

/**
 * The view's fields a script reads (`--json`): state, counters, the in-flight step with its action
 * (and each call of a step with several), the open requests with the replies each accepts
 * (`pending` the first).
 */
export function viewJson(view: RunLogView, driverPid: number | null): Record<string, unknown> {
  const f = view.inFlight;
  const intent = f ? (f.actionIntent ?? f.modelIntent) : null;
  return {
    state: view.state,
    stateLine: stateLine(view, driverPid),
    stopReason: view.ended?.stopReason ?? null,
    inFlight:
      f && intent
        ? {
            stepIndex: f.stepIndex,
            resolution: f.resolution,
            target: f.target,
            action: f.actionIntent?.decision.action ?? f.request?.request.decision?.action ?? null,
            resultId: intent.resultId,
            replayPolicy: intent.replayPolicy,
            // Only a step with several calls has them: every other in-flight row keeps its shape.
            ...(f.calls
              ? { calls: callsInFlight(f.calls).map(({ resultId, action, status }) => ({ resultId, action, status })) }
              : {}),
          }
        : null,
    pending: view.pending ? requestJson(view.pending) : null,
    openRequests: view.openRequests.map(requestJson),
    driverPid,
    steps: view.steps,
    validActions: view.validActions,
    finalAnswer: view.ended?.finalAnswer ?? null,
    startedAt: view.started?.startedAt ?? null,
    children: childRunsOf(view),
  };
}

/**
 * An open request for `--json`: the request, its action and the replies it accepts; a sub-agent's
 * request also `asked`, what it really asks (the innermost request, its action, and its run).
 */
function requestJson(p: InputRequest): Record<string, unknown> {
  const { runId, request: leaf } = askedIn(p);
  const asked = runId === null ? {} : { asked: { runId, ...leaf, action: leaf.decision?.action ?? null } };
  return { ...p, action: p.decision?.action ?? null, acceptedReplies: repliesOf(p), ...asked };
}

/**
 * Characters a terminal acts on or that break or reorder what it shows: C0 and C1 controls (ESC,
 * 8-bit CSI), DEL, the Unicode line and paragraph separators, and bidirectional overrides.
 */
const TERMINAL_UNSAFE =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]/gu;

/** One terminal-safe line: newlines shown as ⏎, unsafe characters as `?`. */
export function oneLine(text: string): string {
  return text.replace(/\r?\n/g, ' ⏎ ').replace(TERMINAL_UNSAFE, '?');
}

/**
 * Characters a terminal acts on, which JSON leaves raw inside strings (it escapes only U+0000 to
 * U+001F): DEL, C1 controls (8-bit CSI), line and paragraph separators, bidirectional overrides.
 */
const RAW_UNSAFE = /[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]/gu;

/**
 * JSON text (NDJSON, `--json`) made safe for a terminal: each character {@link RAW_UNSAFE} names
 * becomes its `\uXXXX` escape. Inside a JSON string that escape decodes to the same character, so
 * the text still parses to the same values; a log cannot drive the terminal.
 */
export function escapeRawForTerminal(json: string): string {
  return json.replace(RAW_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `text` cut to `max` characters, saying how many were left out. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}… (+${text.length - max + 1} chars)`;
}

/** A run id cut to a table column. */
export function clipId(id: string): string {
  return id.length <= 40 ? id : `${id.slice(0, 39)}…`;
}

/** Rows under a header, columns padded to their widest cell. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return `${[fmt(header), ...rows.map(fmt)].join('\n')}\n`;
}
