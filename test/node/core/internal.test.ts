/** The pure internals, table-driven and synchronous: stopping, assembly, recovery. */
import { describe, expect, it } from 'vitest';
import { CorruptLogError, RECORD_VERSION, STOP_REASONS } from '../../../src/core/index.ts';
import type { Budget, ContentBlock, JsonValue, LogRecord, Message, ModelToolSchema, StepRecord, StopReason } from '../../../src/core/index.ts';
import {
  assemblePrefix,
  blockSize,
  messagesSize,
  renderInjections,
  renderToolSection,
  stepHistory,
  toolsSize,
  wrapObservation,
} from '../../../src/core/internal/assembly.ts';
import { classifyLog, diffSnapshots } from '../../../src/core/internal/recovery.ts';
import { countStep, countSteps, stopAfterStep, stopBeforeModelCall } from '../../../src/core/internal/stopping.ts';
import type { Counters } from '../../../src/core/internal/stopping.ts';

const SYNTH = { notExecuted: 'SYNTHETIC: not executed.', envError: 'SYNTHETIC: environment failed.' } as const;
const BUDGET: Budget = { maxSteps: 10, maxValidActions: 5, maxContextChars: 1000 };

function step(patch: Partial<StepRecord> = {}): StepRecord {
  return {
    stepIndex: 0,
    callSeq: 0,
    modelCallId: 'resp',
    modelText: 'text',
    reasoning: null,
    decision: 'action',
    actionRepr: 'act()',
    historyText: 'I will act.',
    historyContent: null,
    observation: 'it worked',
    observationIsSynthetic: false,
    actionStatus: 'executed',
    envReportedCompletion: false,
    observationTruncatedChars: 0,
    finalAnswer: null,
    explanation: null,
    toolCallId: null,
    toolCompletedRun: false,
    startedAt: '',
    endedAt: '',
    ...patch,
  };
}

// ───────────────────────────── stopping ─────────────────────────────

type StopInput = { cancelled: boolean; step: StepRecord; counters: Counters; budget: Budget };

/** Each condition of the stop decision (in order) as a patch that makes it true, and whether it sets `decision`. */
const CONDITIONS: readonly { reason: StopReason; decides: boolean; apply: (i: StopInput) => StopInput }[] = [
  { reason: 'cancelled', decides: false, apply: (i) => ({ ...i, cancelled: true }) },
  { reason: 'model_error', decides: true, apply: (i) => ({ ...i, step: { ...i.step, decision: 'model_error' } }) },
  { reason: 'interpreter_error', decides: true, apply: (i) => ({ ...i, step: { ...i.step, decision: 'interpreter_error' } }) },
  { reason: 'final_answer', decides: true, apply: (i) => ({ ...i, step: { ...i.step, decision: 'final', finalAnswer: '42' } }) },
  { reason: 'env_error', decides: false, apply: (i) => ({ ...i, step: { ...i.step, actionStatus: 'env_error' } }) },
  { reason: 'env_completed', decides: false, apply: (i) => ({ ...i, step: { ...i.step, envReportedCompletion: true } }) },
  { reason: 'tool_completed', decides: false, apply: (i) => ({ ...i, step: { ...i.step, toolCompletedRun: true } }) },
  { reason: 'max_valid_actions', decides: false, apply: (i) => ({ ...i, counters: { ...i.counters, validActions: i.budget.maxValidActions } }) },
  { reason: 'max_steps', decides: false, apply: (i) => ({ ...i, counters: { ...i.counters, steps: i.budget.maxSteps } }) },
];

const calm = (): StopInput => ({ cancelled: false, step: step(), counters: { steps: 3, validActions: 2, usage: { inputTokens: 0, outputTokens: 0 } }, budget: BUDGET });

/** Apply conditions last-to-first, so the earliest one's `decision` is the one that stays. */
const withAll = (conds: readonly (typeof CONDITIONS)[number][]): StopInput => [...conds].reverse().reduce((acc, c) => c.apply(acc), calm());

describe('internal/stopping: stopAfterStep order', () => {
  it('checks the conditions in the order of STOP_REASONS', () => {
    expect(CONDITIONS.map((c) => c.reason)).toEqual(STOP_REASONS.slice(0, CONDITIONS.length));
  });

  it('goes on when no condition holds', () => {
    expect(stopAfterStep(calm())).toBeNull();
  });

  it.each(CONDITIONS.map((c) => ({ reason: c.reason, c })))('stops with $reason when only it holds', ({ reason, c }) => {
    expect(stopAfterStep(c.apply(calm()))).toBe(reason);
  });

  // Two decision kinds cannot hold on one step (model_error vs interpreter_error vs final).
  const pairs = CONDITIONS.slice(0, -1)
    .map((earlier, i) => ({ earlier, later: CONDITIONS[i + 1]! }))
    .filter(({ earlier, later }) => !(earlier.decides && later.decides))
    .map((p) => ({ ...p, name: `${p.earlier.reason} before ${p.later.reason}` }));

  it.each(pairs)('$name when both hold', ({ earlier, later }) => {
    expect(stopAfterStep(withAll([earlier, later]))).toBe(earlier.reason);
  });

  it.each(CONDITIONS.map((c, i) => ({ reason: c.reason, from: CONDITIONS.slice(i) })))('$reason wins over every later condition holding at once', ({ reason, from }) => {
    expect(stopAfterStep(withAll(from))).toBe(reason);
  });

  it.each([
    { label: 'valid actions one below the budget', counters: { steps: 4, validActions: 4, usage: { inputTokens: 0, outputTokens: 0 } }, budget: { ...BUDGET, maxValidActions: 5 }, expected: null },
    { label: 'valid actions equal to the budget', counters: { steps: 5, validActions: 5, usage: { inputTokens: 0, outputTokens: 0 } }, budget: { ...BUDGET, maxValidActions: 5 }, expected: 'max_valid_actions' },
    { label: 'steps one below the budget', counters: { steps: 9, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } }, budget: { ...BUDGET, maxSteps: 10 }, expected: null },
    { label: 'steps equal to the budget', counters: { steps: 10, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } }, budget: { ...BUDGET, maxSteps: 10 }, expected: 'max_steps' },
    { label: 'tokens one below maxTotalTokens', counters: { steps: 1, validActions: 1, usage: { inputTokens: 99, outputTokens: 0 } }, budget: { ...BUDGET, maxTotalTokens: 100 }, expected: null },
    { label: 'tokens equal to maxTotalTokens', counters: { steps: 1, validActions: 1, usage: { inputTokens: 100, outputTokens: 0 } }, budget: { ...BUDGET, maxTotalTokens: 100 }, expected: 'max_tokens' },
    { label: 'max_steps before max_tokens when both are spent', counters: { steps: 10, validActions: 0, usage: { inputTokens: 500, outputTokens: 0 } }, budget: { ...BUDGET, maxSteps: 10, maxTotalTokens: 100 }, expected: 'max_steps' },
    { label: 'no token limit without maxTotalTokens', counters: { steps: 1, validActions: 0, usage: { inputTokens: 10 ** 9, outputTokens: 0 } }, budget: BUDGET, expected: null },
    { label: 'both budgets of 1 spent by one step', counters: { steps: 1, validActions: 1, usage: { inputTokens: 0, outputTokens: 0 } }, budget: { ...BUDGET, maxSteps: 1, maxValidActions: 1 }, expected: 'max_valid_actions' },
  ] as const)('$label → $expected', ({ counters, budget, expected }) => {
    expect(stopAfterStep({ cancelled: false, step: step(), counters, budget })).toBe(expected);
  });

  it('decides from counters alone when there is no step (a resumed run at step 0)', () => {
    expect(stopAfterStep({ cancelled: false, step: null, counters: { steps: 0, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } }, budget: BUDGET })).toBeNull();
    expect(stopAfterStep({ cancelled: true, step: null, counters: { steps: 0, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } }, budget: BUDGET })).toBe('cancelled');
  });
});

describe('internal/stopping: counting', () => {
  it.each([
    { label: 'an executed action', patch: {}, validActions: 1 },
    { label: 'a not_executed action', patch: { actionStatus: 'not_executed', observationIsSynthetic: true }, validActions: 0 },
    { label: 'an env_error action', patch: { actionStatus: 'env_error' }, validActions: 0 },
    { label: 'an invalid decision', patch: { decision: 'invalid', actionStatus: null, explanation: 'bad' }, validActions: 0 },
    { label: 'a final answer', patch: { decision: 'final', actionStatus: null, finalAnswer: 'x' }, validActions: 0 },
    { label: 'a model error', patch: { decision: 'model_error', actionStatus: null }, validActions: 0 },
  ] as const)('$label counts as a step and adds $validActions valid actions', ({ patch, validActions }) => {
    expect(countStep({ steps: 2, validActions: 1, usage: { inputTokens: 0, outputTokens: 0 } }, step(patch))).toEqual({ steps: 3, validActions: 1 + validActions, usage: { inputTokens: 0, outputTokens: 0 } });
  });

  it('counts a whole trajectory the same as step by step', () => {
    const steps = [step(), step({ decision: 'invalid', actionStatus: null }), step({ actionStatus: 'not_executed' }), step(), step({ actionStatus: 'env_error' })];
    expect(countSteps(steps)).toEqual({ steps: 5, validActions: 2, usage: { inputTokens: 0, outputTokens: 0 } });
    expect(countSteps([])).toEqual({ steps: 0, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } });
  });

  it('invalid and not_executed steps reach max_steps but never max_valid_actions', () => {
    const budget = { ...BUDGET, maxSteps: 4, maxValidActions: 1 };
    let counters: Counters = { steps: 0, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } };
    const reasons: (StopReason | null)[] = [];
    for (const s of [step({ decision: 'invalid', actionStatus: null }), step({ actionStatus: 'not_executed' }), step({ decision: 'invalid', actionStatus: null }), step({ actionStatus: 'not_executed' })]) {
      counters = countStep(counters, s);
      reasons.push(stopAfterStep({ cancelled: false, step: s, counters, budget }));
    }
    expect(reasons).toEqual([null, null, null, 'max_steps']);
    expect(counters).toEqual({ steps: 4, validActions: 0, usage: { inputTokens: 0, outputTokens: 0 } });
  });
});

describe('internal/stopping: stopBeforeModelCall', () => {
  it.each([
    { label: 'size well below the limit', cancelled: false, contextSize: 10, expected: null },
    { label: 'size equal to the limit', cancelled: false, contextSize: 1000, expected: null },
    { label: 'size one over the limit', cancelled: false, contextSize: 1001, expected: 'context_limit' },
    { label: 'cancelled below the limit', cancelled: true, contextSize: 10, expected: 'cancelled' },
    { label: 'cancelled and over the limit', cancelled: true, contextSize: 5000, expected: 'cancelled' },
  ] as const)('$label → $expected', ({ cancelled, contextSize, expected }) => {
    expect(stopBeforeModelCall({ cancelled, contextSize, budget: BUDGET })).toBe(expected);
  });
});

// ───────────────────────────── assembly ─────────────────────────────

const sys = (t: string): Message => ({ role: 'system', content: [{ type: 'text', text: t }] });
const usr = (t: string): Message => ({ role: 'user', content: [{ type: 'text', text: t }] });
const textOf = (m: Message | null | undefined): string => (m?.content[0]?.type === 'text' ? m.content[0].text : '');

const TOOLS: readonly ModelToolSchema[] = [
  { name: 'add', description: 'Add two integers.', parameters: { type: 'object', properties: { a: { type: 'integer' } } } },
  { name: 'note', description: 'Write a note.', parameters: { type: 'object', required: ['text'] } },
];

describe('internal/assembly: segment order', () => {
  it('assembles run context, tool section, injection slots, goal context, then history', () => {
    const prefix = assemblePrefix({
      runContext: [sys('RUN-1'), usr('RUN-2')],
      tools: TOOLS,
      toolRenderStyle: 'json',
      injections: { zeta: [{ name: 'z', text: 'INJ-Z' }], alpha: [{ name: 'a', text: 'INJ-A' }] },
      goalContext: [usr('GOAL')],
    });
    const history = stepHistory(step({ historyText: 'HIST-A', observation: 'OBS' }), '{observation}', SYNTH);
    const all = [...prefix, ...history];
    const labels = all.map((m) => textOf(m).match(/RUN-\d|"add"|INJ-[AZ]|GOAL|HIST-A|OBS/)?.[0]);
    expect(labels).toEqual(['RUN-1', 'RUN-2', '"add"', 'INJ-A', 'INJ-Z', 'GOAL', 'HIST-A', 'OBS']);
    expect(all.map((m) => m.role)).toEqual(['system', 'user', 'system', 'system', 'system', 'user', 'assistant', 'user']);
  });

  it.each([
    { label: 'style none', tools: TOOLS, style: 'none' },
    { label: 'an empty registry with markdown', tools: [], style: 'markdown' },
    { label: 'an empty registry with json', tools: [], style: 'json' },
  ] as const)('has no tool section for $label', ({ tools, style }) => {
    expect(renderToolSection(tools, style)).toBeNull();
    const prefix = assemblePrefix({ runContext: [sys('R')], tools, toolRenderStyle: style, injections: {}, goalContext: [usr('G')] });
    expect(prefix).toEqual([sys('R'), usr('G')]);
  });

  it('assembles empty injections and an empty registry byte-identically to none at all', () => {
    const base = { runContext: [sys('R')], goalContext: [usr('G')] };
    const empty = assemblePrefix({ ...base, tools: [], toolRenderStyle: 'markdown', injections: { skills: [], more: [] } });
    const none = assemblePrefix({ ...base, tools: [], toolRenderStyle: 'none', injections: {} });
    expect(JSON.stringify(empty)).toBe(JSON.stringify(none));
  });
});

describe('internal/assembly: tool section rendering', () => {
  it('renders json as the modelSchemas array in one system message', () => {
    const msg = renderToolSection(TOOLS, 'json');
    expect(msg?.role).toBe('system');
    expect(msg?.content).toHaveLength(1);
    expect(JSON.parse(textOf(msg))).toEqual(TOOLS);
  });

  it('renders markdown as a "## Tools" heading, then each tool\'s name, description and schema in a json code block, in order', () => {
    const msg = renderToolSection(TOOLS, 'markdown');
    expect(msg?.role).toBe('system');
    const t = textOf(msg);
    expect(t.startsWith('## Tools')).toBe(true);
    const blocks = [...t.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1] ?? ''));
    expect(blocks).toEqual(TOOLS.map((x) => x.parameters));
    const positions = ['add', 'Add two integers.', '"integer"', 'note', 'Write a note.', '"required"'].map((s) => t.indexOf(s));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });
});

describe('internal/assembly: injection slots', () => {
  it('gives one system message per non-empty channel, channels sorted, entries in given order', () => {
    const msgs = renderInjections({
      web: [{ name: 'search', text: 'Use search.' }, { name: 'browse', text: 'Then browse.' }],
      empty: [],
      code: [{ name: 'python', text: 'Write Python.' }],
      Alpha: [{ name: 'upper', text: 'Uppercase sorts first.' }],
    });
    expect(msgs.map((m) => m.role)).toEqual(['system', 'system', 'system']);
    expect(msgs.map(textOf)).toEqual(['upper\nUppercase sorts first.', 'python\nWrite Python.', 'search\nUse search.\n\nbrowse\nThen browse.']);
  });

  it('gives nothing for no channels or only empty ones', () => {
    expect(renderInjections({})).toEqual([]);
    expect(renderInjections({ a: [], b: [] })).toEqual([]);
  });
});

describe('internal/assembly: observation template', () => {
  it.each([
    { template: 'Observation:\n{observation}', obs: 'x', expected: 'Observation:\nx' },
    { template: '{observation}|{observation}|{observation}', obs: 'ab', expected: 'ab|ab|ab' },
    { template: 'no placeholder', obs: 'x', expected: 'no placeholder' },
    { template: '<{observation}>', obs: 'cost $& and $1 and $$', expected: '<cost $& and $1 and $$>' },
    { template: '{observation}', obs: '{observation}', expected: '{observation}' },
  ])('wraps $obs into $template', ({ template, obs, expected }) => {
    expect(wrapObservation(template, obs)).toBe(expected);
  });
});

describe('internal/assembly: size metric', () => {
  it.each([
    { label: 'text', block: { type: 'text', text: 'hello' }, size: 5 },
    { label: 'tool_call', block: { type: 'tool_call', id: 'ignored-id', name: 'add', arguments: { a: 1 } }, size: 3 + '{"a":1}'.length },
    { label: 'tool_result', block: { type: 'tool_result', toolCallId: 'ignored-id', text: 'seven' }, size: 5 },
    { label: 'reasoning', block: { type: 'reasoning', text: 'thinking', signature: 'ignored-signature' }, size: 8 },
  ] as const)('measures a $label block as $size', ({ block, size }) => {
    expect(blockSize(block as ContentBlock)).toBe(size);
  });

  it('sums the blocks of every message, and adds the tools JSON only when there are tools', () => {
    const msgs: Message[] = [usr('abc'), { role: 'assistant', content: [{ type: 'text', text: 'de' }, { type: 'reasoning', text: 'f' }] }];
    expect(messagesSize(msgs)).toBe(6);
    expect(messagesSize([])).toBe(0);
    expect(toolsSize([])).toBe(0);
    expect(toolsSize(TOOLS)).toBe(JSON.stringify(TOOLS).length);
  });
});

describe('internal/assembly: history of a step', () => {
  const T = 'Obs: {observation}';

  it.each([
    { label: 'an executed action', s: step({ observation: 'real output' }), user: 'Obs: real output' },
    { label: 'a not_executed action', s: step({ actionStatus: 'not_executed', observation: 'executor text: unknown tool', observationIsSynthetic: true }), user: `Obs: ${SYNTH.notExecuted}` },
    { label: 'an env_error action', s: step({ actionStatus: 'env_error', observation: 'executor text: sandbox died' }), user: `Obs: ${SYNTH.envError}` },
    { label: 'an invalid decision (explanation verbatim, not wrapped)', s: step({ decision: 'invalid', actionStatus: null, observation: null, explanation: 'Reply with JSON {observation}.' }), user: 'Reply with JSON {observation}.' },
  ])('adds the assistant turn, then the user turn, for $label', ({ s, user }) => {
    expect(stepHistory(s, T, SYNTH)).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'I will act.' }] },
      { role: 'user', content: [{ type: 'text', text: user }] },
    ]);
  });

  it.each([
    { label: 'a final answer', s: step({ decision: 'final', actionStatus: null, finalAnswer: '7' }) },
    { label: 'a model error', s: step({ decision: 'model_error', actionStatus: null, modelCallId: null }) },
    { label: 'an interpreter error', s: step({ decision: 'interpreter_error', actionStatus: null }) },
  ])('adds nothing for $label (no model call follows it)', ({ s }) => {
    expect(stepHistory(s, T, SYNTH)).toEqual([]);
  });

  const call = (id: string, name = 'add'): ContentBlock => ({ type: 'tool_call', id, name, arguments: { a: 1 } });

  it.each([
    { label: 'executed', patch: { observation: 'sum is 2' }, text: 'Obs: sum is 2' },
    { label: 'not_executed', patch: { actionStatus: 'not_executed', observation: 'executor text' }, text: `Obs: ${SYNTH.notExecuted}` },
    { label: 'env_error', patch: { actionStatus: 'env_error', observation: 'executor text' }, text: `Obs: ${SYNTH.envError}` },
  ] as const)('answers a native tool call ($label) with a tool_result carrying its id', ({ patch, text }) => {
    const content: ContentBlock[] = [{ type: 'reasoning', text: 'hmm', signature: 's' }, call('call_7')];
    const [assistant, user] = stepHistory(step({ ...patch, historyContent: content, toolCallId: 'call_7' }), T, SYNTH);
    expect(assistant).toEqual({ role: 'assistant', content });
    expect(user).toEqual({ role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_7', text }] });
  });

  it('answers every call of an invalid decision with the explanation, in order, before any text', () => {
    const content: ContentBlock[] = [{ type: 'text', text: 'Both.' }, call('c_b', 'note'), call('c_a'), call('c_c')];
    const s = step({ decision: 'invalid', actionStatus: null, observation: null, explanation: 'One tool at a time.', historyContent: content });
    const [assistant, user] = stepHistory(s, T, SYNTH);
    expect(assistant?.content).toEqual(content);
    expect(user?.content).toEqual(['c_b', 'c_a', 'c_c'].map((id) => ({ type: 'tool_result', toolCallId: id, text: 'One tool at a time.' })));
  });

  it('uses historyContent instead of historyText when both are present', () => {
    const content: ContentBlock[] = [{ type: 'text', text: 'from content' }];
    const [assistant] = stepHistory(step({ historyText: 'from text', historyContent: content }), T, SYNTH);
    expect(assistant?.content).toEqual(content);
  });
});

// ───────────────────────────── recovery ─────────────────────────────

const v = RECORD_VERSION;
const started: LogRecord = { kind: 'run_started', v, runId: 'r', snapshot: { a: 1 }, snapshotHash: 'h', startedAt: '' };
const modelIntent = (i: number): LogRecord => ({ kind: 'intent', v, intent: 'model_call', stepIndex: i, callSeq: i, resultId: `s${i}.model`, replayPolicy: 'safe' });
const result = (i: number): LogRecord => ({ kind: 'result', v, resultId: `s${i}.model`, stepIndex: i, callSeq: i, reply: { callId: `c${i}`, text: 't', reasoning: null, toolCalls: [], content: null } });
const actionIntent = (i: number): LogRecord => ({
  kind: 'intent',
  v,
  intent: 'action',
  stepIndex: i,
  resultId: `s${i}.action`,
  replayPolicy: 'never',
  decision: { kind: 'action', action: { kind: 'code', source: 'x' }, trajectoryRepr: 'x', historyText: 't' },
});
const stepRec = (i: number): LogRecord => ({ kind: 'step', v, step: step({ stepIndex: i, callSeq: i, actionStatus: null }), actionResult: null });
const ended: LogRecord = { kind: 'run_ended', v, stopReason: 'max_steps', finalAnswer: null, steps: 1, validActions: 1, eventDeliveryFailures: 0, endedAt: '' };
const fullStep = (i: number): LogRecord[] => [modelIntent(i), result(i), actionIntent(i), stepRec(i)];

const withPolicy = (rec: LogRecord, replayPolicy: 'safe' | 'never'): LogRecord => ({ ...rec, replayPolicy }) as LogRecord;

describe('internal/recovery: classifyLog', () => {
  it('classifies an empty log as not started', () => {
    expect(classifyLog([])).toEqual({ state: 'not_started', started: null, steps: [], inFlight: null, pending: null, upgrades: [], ended: null });
  });

  it('classifies a log with only run_started as the step-0 boundary', () => {
    expect(classifyLog([started])).toEqual({ state: 'at_boundary', started, steps: [], inFlight: null, pending: null, upgrades: [], ended: null });
  });

  it.each([
    { label: 'after one full step', log: [started, ...fullStep(0)], steps: 1 },
    { label: 'after a step without an action (final/invalid)', log: [started, modelIntent(0), result(0), stepRec(0)], steps: 1 },
    { label: 'after two steps', log: [started, ...fullStep(0), ...fullStep(1)], steps: 2 },
  ])('classifies a log $label as a boundary', ({ log, steps }) => {
    const c = classifyLog(log);
    expect(c.state).toBe('at_boundary');
    expect(c.steps.map((s) => s.stepIndex)).toEqual([...Array(steps).keys()]);
  });

  it('classifies a log ending in run_ended as ended, with its steps', () => {
    const c = classifyLog([started, ...fullStep(0), ended]);
    expect(c).toEqual({ state: 'ended', started, steps: [(stepRec(0) as { step: StepRecord }).step], inFlight: null, pending: null, upgrades: [], ended });
  });

  it.each([
    { label: 'a safe model-call intent without result', tail: [modelIntent(0)], resolution: 'reissue_model', target: 'model_call', done: 0 },
    { label: 'a never model-call intent without result', tail: [withPolicy(modelIntent(0), 'never')], resolution: 'settle', target: 'model_call', done: 0 },
    { label: 'a model result without action intent', tail: [modelIntent(0), result(0)], resolution: 'reinterpret', target: 'model_call', done: 0 },
    { label: 'a never action intent without step', tail: [modelIntent(0), result(0), actionIntent(0)], resolution: 'settle', target: 'action', done: 0 },
    { label: 'a safe action intent without step', tail: [modelIntent(0), result(0), withPolicy(actionIntent(0), 'safe')], resolution: 'replay_action', target: 'action', done: 0 },
    { label: 'a model-call intent after a completed step', tail: [...fullStep(0), modelIntent(1)], resolution: 'reissue_model', target: 'model_call', done: 1 },
    { label: 'an action intent after a completed step', tail: [...fullStep(0), modelIntent(1), result(1), actionIntent(1)], resolution: 'settle', target: 'action', done: 1 },
  ])('classifies $label as in flight, resolved by $resolution', ({ tail, resolution, target, done }) => {
    const c = classifyLog([started, ...tail]);
    expect(c.state).toBe('in_flight');
    expect(c.steps).toHaveLength(done);
    expect(c.inFlight).toMatchObject({ stepIndex: done, resolution, target });
    expect(c.inFlight?.modelIntent).toEqual(tail.find((r) => r.kind === 'intent' && r.intent === 'model_call' && r.stepIndex === done));
    expect(c.inFlight?.result ?? null).toEqual(tail.find((r) => r.kind === 'result' && r.stepIndex === done) ?? null);
    expect(c.inFlight?.actionIntent ?? null).toEqual(tail.find((r) => r.kind === 'intent' && r.intent === 'action' && r.stepIndex === done) ?? null);
  });

  it.each([
    { label: 'a first record that is not run_started', log: [modelIntent(0)], line: 1 },
    { label: 'a second run_started', log: [started, started], line: 2 },
    { label: 'records after run_ended', log: [started, ended, modelIntent(0)], line: 3 },
    { label: 'a step out of order', log: [started, ...fullStep(0), stepRec(2)], line: 6 },
    { label: 'a step repeated', log: [started, ...fullStep(0), stepRec(0)], line: 6 },
    { label: 'an intent for a later step', log: [started, modelIntent(1)], line: 2 },
    { label: 'a result without its intent', log: [started, result(0)], line: 2 },
    { label: 'an action intent without a model result', log: [started, modelIntent(0), actionIntent(0)], line: 3 },
    { label: 'a second model-call intent for one step', log: [started, modelIntent(0), modelIntent(0)], line: 3 },
    { label: 'a step without its model-call intent', log: [started, stepRec(0)], line: 2 },
    { label: 'an action result without its action intent', log: [started, modelIntent(0), result(0), { ...(stepRec(0) as object), actionResult: { resultId: 's0.action', outcome: { status: 'executed', observation: 'o', observationIsSynthetic: false, envReportedCompletion: false, observationTruncatedChars: 0 } } } as LogRecord], line: 4 },
    { label: 'a second result for one model call', log: [started, modelIntent(0), result(0), result(0)], line: 4 },
    { label: 'a second action intent for one step', log: [started, modelIntent(0), result(0), actionIntent(0), actionIntent(0)], line: 5 },
  ])('refuses $label with CorruptLogError at record $line', ({ log, line }) => {
    let caught: unknown;
    try {
      classifyLog(log);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CorruptLogError);
    expect((caught as CorruptLogError).line).toBe(line);
  });
});

describe('internal/recovery: diffSnapshots', () => {
  const base: JsonValue = {
    model: { model: 'm1', temperature: 0 },
    budget: { maxSteps: 5, maxValidActions: 3, maxContextChars: 100 },
    tools: [
      { name: 'a', description: 'A', parameters: { type: 'object' } },
      { name: 'b', description: 'B', parameters: { type: 'object', required: ['x'] } },
    ],
    observationTemplate: '{observation}',
  };
  const edit = (f: (s: Record<string, unknown>) => void): JsonValue => {
    const copy = structuredClone(base) as Record<string, unknown>;
    f(copy);
    return copy as JsonValue;
  };

  it.each([
    { label: 'equal snapshots', current: structuredClone(base), keys: [] },
    { label: 'a nested scalar', current: edit((s) => ((s['budget'] as Record<string, number>)['maxSteps'] = 6)), keys: ['budget.maxSteps'] },
    { label: 'two nested scalars, sorted', current: edit((s) => ((s['model'] as Record<string, unknown>)['temperature'] = 1, (s['budget'] as Record<string, number>)['maxContextChars'] = 1)), keys: ['budget.maxContextChars', 'model.temperature'] },
    { label: 'a named element field, by name', current: edit((s) => ((s['tools'] as Record<string, unknown>[])[1]!['description'] = 'changed')), keys: ['tools[b].description'] },
    { label: 'deep inside a named element, array items by index', current: edit((s) => (((s['tools'] as Record<string, Record<string, unknown>>[])[1]!['parameters']!['required'] as string[])[0] = 'y')), keys: ['tools[b].parameters.required.0'] },
    { label: 'a named element added', current: edit((s) => (s['tools'] as unknown[]).push({ name: 'c' })), keys: ['tools[c]'] },
    { label: 'a named element removed and another renamed', current: edit((s) => ((s['tools'] as Record<string, unknown>[]).shift(), ((s['tools'] as Record<string, unknown>[])[0]!['name'] = 'z'))), keys: ['tools[a]', 'tools[b]', 'tools[z]'] },
    { label: 'named elements reordered', current: edit((s) => (s['tools'] as unknown[]).reverse()), keys: ['tools'] },
    { label: 'an unnamed array that grew', current: edit((s) => ((s['budget'] as Record<string, unknown>)['list'] = [1])), keys: ['budget.list'] },
    { label: 'a key only in the current snapshot', current: edit((s) => ((s['model'] as Record<string, unknown>)['seed'] = 7)), keys: ['model.seed'] },
    { label: 'a key only in the stored snapshot', current: edit((s) => delete s['observationTemplate']), keys: ['observationTemplate'] },
    { label: 'a value changing type', current: edit((s) => (s['budget'] = 'none')), keys: ['budget'] },
  ])('lists $label', ({ current, keys }) => {
    expect(diffSnapshots(base, current)).toEqual(keys);
  });

  it('is symmetric in which keys it names', () => {
    const current = edit((s) => ((s['model'] as Record<string, unknown>)['seed'] = 7, delete s['observationTemplate']));
    expect(diffSnapshots(base, current)).toEqual(diffSnapshots(current, base));
  });

  it('names the root when the snapshots are not both objects', () => {
    expect(diffSnapshots(base, null)).toEqual(['(root)']);
  });
});
