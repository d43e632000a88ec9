/**
 * The pure context assembly, table-driven and synchronous: segment order, the tool section,
 * injections, observations, sizes, a step's history.
 */
import { describe, expect, it } from 'vitest';
import type { ContentBlock, Message, ModelToolSchema } from '../../../src/core/index.ts';
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
import { step } from './internal-step.ts';

const SYNTH = { notExecuted: 'SYNTHETIC: not executed.', envError: 'SYNTHETIC: environment failed.' } as const;

const sys = (t: string): Message => ({ role: 'system', content: [{ type: 'text', text: t }] });
const usr = (t: string): Message => ({ role: 'user', content: [{ type: 'text', text: t }] });
const textOf = (m: Message | null | undefined): string => (m?.content[0]?.type === 'text' ? m.content[0].text : '');

const TOOLS: readonly ModelToolSchema[] = [
  {
    name: 'add',
    description: 'Add two integers.',
    parameters: { type: 'object', properties: { a: { type: 'integer' } } },
  },
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
    expect(all.map((m) => m.role)).toEqual([
      'system',
      'user',
      'system',
      'system',
      'system',
      'user',
      'assistant',
      'user',
    ]);
  });

  it.each([
    { label: 'style none', tools: TOOLS, style: 'none' },
    { label: 'an empty registry with markdown', tools: [], style: 'markdown' },
    { label: 'an empty registry with json', tools: [], style: 'json' },
  ] as const)('has no tool section for $label', ({ tools, style }) => {
    expect(renderToolSection(tools, style)).toBeNull();
    const prefix = assemblePrefix({
      runContext: [sys('R')],
      tools,
      toolRenderStyle: style,
      injections: {},
      goalContext: [usr('G')],
    });
    expect(prefix).toEqual([sys('R'), usr('G')]);
  });

  it('assembles empty injections and an empty registry byte-identically to none at all', () => {
    const base = { runContext: [sys('R')], goalContext: [usr('G')] };
    const empty = assemblePrefix({
      ...base,
      tools: [],
      toolRenderStyle: 'markdown',
      injections: { skills: [], more: [] },
    });
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
    const positions = ['add', 'Add two integers.', '"integer"', 'note', 'Write a note.', '"required"'].map((s) =>
      t.indexOf(s),
    );
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });
});

describe('internal/assembly: injection slots', () => {
  it('gives one system message per non-empty channel, channels sorted, entries in given order', () => {
    const msgs = renderInjections({
      web: [
        { name: 'search', text: 'Use search.' },
        { name: 'browse', text: 'Then browse.' },
      ],
      empty: [],
      code: [{ name: 'python', text: 'Write Python.' }],
      Alpha: [{ name: 'upper', text: 'Uppercase sorts first.' }],
    });
    expect(msgs.map((m) => m.role)).toEqual(['system', 'system', 'system']);
    expect(msgs.map(textOf)).toEqual([
      'upper\nUppercase sorts first.',
      'python\nWrite Python.',
      'search\nUse search.\n\nbrowse\nThen browse.',
    ]);
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
    {
      label: 'tool_call',
      block: { type: 'tool_call', id: 'ignored-id', name: 'add', arguments: { a: 1 } },
      size: 3 + '{"a":1}'.length,
    },
    { label: 'tool_result', block: { type: 'tool_result', toolCallId: 'ignored-id', text: 'seven' }, size: 5 },
    { label: 'reasoning', block: { type: 'reasoning', text: 'thinking', signature: 'ignored-signature' }, size: 8 },
  ] as const)('measures a $label block as $size', ({ block, size }) => {
    expect(blockSize(block as ContentBlock)).toBe(size);
  });

  it('sums the blocks of every message, and adds the tools JSON only when there are tools', () => {
    const msgs: Message[] = [
      usr('abc'),
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'de' },
          { type: 'reasoning', text: 'f' },
        ],
      },
    ];
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
    {
      label: 'a not_executed action',
      s: step({
        actionStatus: 'not_executed',
        observation: 'executor text: unknown tool',
        observationIsSynthetic: true,
      }),
      user: `Obs: ${SYNTH.notExecuted}`,
    },
    {
      label: 'an env_error action',
      s: step({ actionStatus: 'env_error', observation: 'executor text: sandbox died' }),
      user: `Obs: ${SYNTH.envError}`,
    },
    {
      label: 'an invalid decision (explanation verbatim, not wrapped)',
      s: step({
        decision: 'invalid',
        actionStatus: null,
        observation: null,
        explanation: 'Reply with JSON {observation}.',
      }),
      user: 'Reply with JSON {observation}.',
    },
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
    {
      label: 'not_executed',
      patch: { actionStatus: 'not_executed', observation: 'executor text' },
      text: `Obs: ${SYNTH.notExecuted}`,
    },
    {
      label: 'env_error',
      patch: { actionStatus: 'env_error', observation: 'executor text' },
      text: `Obs: ${SYNTH.envError}`,
    },
  ] as const)('answers a native tool call ($label) with a tool_result carrying its id', ({ patch, text }) => {
    const content: ContentBlock[] = [{ type: 'reasoning', text: 'hmm', signature: 's' }, call('call_7')];
    const [assistant, user] = stepHistory(step({ ...patch, historyContent: content, toolCallId: 'call_7' }), T, SYNTH);
    expect(assistant).toEqual({ role: 'assistant', content });
    expect(user).toEqual({ role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_7', text }] });
  });

  it('answers every call of an invalid decision with the explanation, in order, before any text', () => {
    const content: ContentBlock[] = [{ type: 'text', text: 'Both.' }, call('c_b', 'note'), call('c_a'), call('c_c')];
    const s = step({
      decision: 'invalid',
      actionStatus: null,
      observation: null,
      explanation: 'One tool at a time.',
      historyContent: content,
    });
    const [assistant, user] = stepHistory(s, T, SYNTH);
    expect(assistant?.content).toEqual(content);
    expect(user?.content).toEqual(
      ['c_b', 'c_a', 'c_c'].map((id) => ({ type: 'tool_result', toolCallId: id, text: 'One tool at a time.' })),
    );
  });

  it('uses historyContent instead of historyText when both are present', () => {
    const content: ContentBlock[] = [{ type: 'text', text: 'from content' }];
    const [assistant] = stepHistory(step({ historyText: 'from text', historyContent: content }), T, SYNTH);
    expect(assistant?.content).toEqual(content);
  });
});
