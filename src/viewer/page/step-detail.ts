/**
 * One step in full, as the run page shows the chosen step: its model reply and reasoning, its
 * call (or each call of a step with several, with its observation and sub-agent run), what a
 * person was asked and replied, its observation, final answer and tokens — and the step in flight:
 * what it waits for (each open request) or what resume would do with it, from the summary's
 * `inFlight`. What a step writes and why: docs/design/step.md; what the page shows: docs/viewer.md.
 * @module
 */
import type { ApiAction, ApiResume, ApiStepRow, Pending, Summary } from './api.ts';
import { clipText, duration, h, ms, num, pretty, when } from './dom.ts';
import { stepLabel, stepTags } from './timeline.ts';
import { runLink } from './tree.ts';

function actionText(a: ApiAction | null): string {
  if (!a) return 'the model call';
  return a.kind === 'tool_call'
    ? `${a.name}(${clipText(JSON.stringify(a.arguments) ?? '', 120)})`
    : `code: ${clipText(a.source, 120)}`;
}

/** The open requests of a summary (a viewer older than `openRequests` gave `pending` alone). */
export function openOf(s: Summary): Pending[] {
  return s.openRequests ?? (s.pending ? [s.pending] : []);
}

/** The step in flight as the timeline's last row shows it (`pending` or `inflight`), or null when there is none. */
export function tailOf(s: Summary | null): { label: string; kind: string } | null {
  if (!s) return null;
  const open = openOf(s);
  const asked = (p: Pending): string =>
    p.asked
      ? `${p.asked.kind} of ${actionText(p.asked.action)} in sub-agent run ${p.asked.runId}`
      : `${p.kind} of ${actionText(p.action)}`;
  if (open.length > 1)
    return { label: `waiting for a person: ${open.length} requests (${open.map(asked).join('; ')})`, kind: 'pending' };
  if (open[0]) return { label: `waiting for a person: ${asked(open[0])}`, kind: 'pending' };
  if (s.inFlight)
    return {
      label:
        `${s.status === 'running' ? 'in flight' : 'interrupted'}: ` +
        `${s.inFlight.target === 'action' ? actionText(s.inFlight.action) : 'model call'} — ` +
        resolutionText(s.inFlight.resolution, s.inFlight.replayPolicy),
      kind: 'inflight',
    };
  if (s.status === 'running') return { label: 'running: the next step has not written anything yet', kind: 'inflight' };
  return null;
}

function resolutionText(resolution: string, policy: string): string {
  const texts: Record<string, string> = {
    reissue_model: 'resume calls the model again (safe)',
    reinterpret: 'the reply is stored; resume interprets it',
    replay_action: 'resume runs the action again (safe)',
    settle: `replay policy ${policy}: resume asks a person whether it happened`,
    apply_input: 'a reply landed; resume carries it out',
    await_input: 'waiting for a person',
  };
  return texts[resolution] ?? resolution;
}

/** The step in flight in full: what it waits for or what resume does with it, its calls, its stored reply. */
export function tailDetail(s: Summary | null): Node[] {
  const t = tailOf(s);
  if (!s || !t) return [h('p', { class: 'muted' }, 'Nothing is in flight.')];
  const f = s.inFlight;
  return [
    h('h2', {}, `Step #${s.steps} — ${t.kind === 'pending' ? 'waiting' : 'in flight'}`),
    h('p', {}, t.label),
    f?.calls
      ? section('Tool calls', ...f.calls.map((c) => callRow(c.resultId, actionText(c.action), c.status, null)))
      : f?.action
        ? section('Action', actionBlock(f.action))
        : null,
    f?.modelText ? collapsed('Model reply (stored, not yet acted on)', f.modelText) : null,
    f ? h('p', { class: 'muted' }, `${f.resultId}, replay policy ${f.replayPolicy}`) : null,
  ].filter((n): n is HTMLElement => n !== null);
}

/** One call of a step with several: its resultId, action and status, and its observation once it has one. */
function callRow(
  resultId: string,
  action: string,
  status: string,
  observation: Node | null,
  child: Node | null = null,
): HTMLElement {
  return h(
    'div',
    { class: 'call-row' },
    h('code', {}, resultId),
    h('strong', { class: 'tool-name' }, action),
    h('span', { class: `tag t-${status.split(/[:\s]/)[0]}` }, status),
    observation,
    child,
  );
}

function section(title: string, ...body: (Node | null)[]): HTMLElement {
  return h('div', { class: 'block' }, h('h3', {}, title), ...body);
}

function collapsed(title: string, text: string): HTMLElement {
  return h('details', {}, h('summary', {}, `${title} (${num(text.length)} characters)`), h('pre', {}, text));
}

function actionBlock(a: ApiAction): HTMLElement {
  if (a.kind === 'code') return h('pre', { class: 'args' }, a.source);
  return h(
    'div',
    {},
    h('p', {}, h('strong', { class: 'tool-name' }, a.name)),
    h('pre', { class: 'args' }, pretty(a.arguments)),
  );
}

/** The button that loads the step's observations whole, when a page of steps clipped them. */
function moreButton(row: ApiStepRow, loadFull: (() => void) | null): HTMLElement | null {
  if (row.observationClippedChars === 0 || !loadFull) return null;
  return h(
    'button',
    { type: 'button', onclick: loadFull },
    `Show the other ${num(row.observationClippedChars)} characters`,
  );
}

/**
 * Which driver session carried the step out, in a run later drivers took over (null for a run one
 * driver carried): `driver 1 of 3: the one that started the run`, or the later driver and where it took over.
 */
export function driverLine(
  stepIndex: number,
  driver: number | undefined,
  resumes: readonly ApiResume[],
): string | null {
  if (resumes.length === 0) return null;
  const n = driver ?? 1 + resumes.filter((r) => r.stepIndex <= stepIndex).length;
  const of = `Carried out by driver ${n} of ${resumes.length + 1}`;
  const took = resumes[n - 2];
  if (!took) return `${of}: the one that started the run.`;
  const how = took.resolution === null ? 'at a step boundary' : `in flight: ${took.resolution}`;
  return `${of}: a later driver, which took the run over at step ${took.stepIndex} (${how}) at ${when(took.at)}.`;
}

/**
 * A completed step in full; `loadFull` fetches its observations whole when a page of steps clipped
 * them; `resumes`: where later drivers took the run over (the summary's), to say which one ran it.
 */
export function stepDetail(
  row: ApiStepRow,
  loadFull: (() => void) | null,
  resumes: readonly ApiResume[] = [],
): (Node | null)[] {
  const s = row.step;
  const took = ms(s.endedAt) - ms(s.startedAt);
  const marks = stepTags(
    row,
    resumes.some((r) => r.stepIndex === s.stepIndex),
  );
  const driver = driverLine(s.stepIndex, row.driver, resumes);
  const obs = s.observation;
  return [
    h('h2', {}, `Step #${s.stepIndex} — ${s.decision}`),
    h(
      'p',
      { class: 'muted' },
      `${when(s.startedAt)} · ${duration(took)}${s.finishReason ? ` · finish ${s.finishReason}` : ''}`,
    ),
    marks.length > 0 ? h('p', {}, ...marks.map((m) => h('span', { class: `tag t-${m.split(/[:\s]/)[0]}` }, m))) : null,
    row.resumed ? h('p', { class: 'resumed-note' }, row.resumed) : null,
    driver ? h('p', { class: 'muted driver-note' }, driver) : null,
    s.modelText !== null ? collapsed('Model reply', s.modelText) : null,
    s.reasoning ? collapsed('Reasoning', s.reasoning) : null,
    s.calls
      ? section(
          'Tool calls',
          ...s.calls.map((c) =>
            callRow(
              c.resultId,
              c.actionRepr,
              c.status,
              h('pre', { class: `obs${c.observationIsSynthetic ? ' synthetic' : ''}` }, c.observation),
              c.childRunId === undefined ? null : h('p', {}, 'Sub-agent run: ', runLink(c.childRunId)),
            ),
          ),
          moreButton(row, loadFull),
        )
      : row.action
        ? section('Tool call', actionBlock(row.action))
        : s.actionRepr
          ? section('Action', h('pre', { class: 'args' }, s.actionRepr))
          : null,
    s.childRunId === undefined ? null : section('Sub-agent run', h('p', {}, runLink(s.childRunId, 'child-run-link'))),
    ...row.input.map((i) =>
      section(
        `Asked a person (${i.kind})`,
        h('p', {}, `asked ${when(i.requestedAt)}; ${i.reply ? `replied ${when(i.receivedAt)}` : 'no reply yet'}`),
        i.reply ? h('pre', { class: 'args' }, pretty(i.reply)) : null,
      ),
    ),
    // A step with several calls shows each call's observation above.
    obs !== null && !s.calls
      ? section(
          s.actionStatus === 'denied'
            ? 'Denied — the reason the model was told'
            : s.observationIsSynthetic
              ? 'Observation (synthetic: written by the library, not the environment)'
              : 'Observation',
          h('pre', { class: `obs${s.observationIsSynthetic ? ' synthetic' : ''}` }, obs),
          moreButton(row, loadFull),
        )
      : null,
    s.finalAnswer !== null ? section('Final answer', h('pre', {}, s.finalAnswer)) : null,
    s.explanation !== null ? section('Why the reply was invalid', h('pre', {}, s.explanation)) : null,
    s.usage
      ? h(
          'p',
          { class: 'muted' },
          `tokens: in ${num(s.usage.inputTokens)}, out ${num(s.usage.outputTokens)}` +
            (s.usage.cachedInputTokens ? `, cached ${num(s.usage.cachedInputTokens)}` : '') +
            (s.usage.reasoningTokens ? `, reasoning ${num(s.usage.reasoningTokens)}` : ''),
        )
      : null,
    h('p', { class: 'muted label-line' }, clipText(stepLabel(row), 300)),
  ];
}
