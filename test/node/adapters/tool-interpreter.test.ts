import { describe, expect, it } from 'vitest';
import { anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import { openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import { parseArguments } from '../../../src/adapters/tool-interpreter.ts';
import { ToolRegistry } from '../../../src/core/index.ts';
import type { ModelReply } from '../../../src/core/index.ts';
import { ADD_TOOL } from './helpers.ts';

const tools = ToolRegistry.of([{ ...ADD_TOOL }]);
const reply = (over: Partial<ModelReply>): ModelReply => ({
  callId: 'r',
  text: '',
  reasoning: null,
  toolCalls: [],
  ...over,
});
const call = (id: string, args: ModelReply['text'] | object = { a: 1, b: 2 }) => ({
  id,
  name: 'add',
  arguments: args as never,
});

describe.each([
  ['openAIToolInterpreter', openAIToolInterpreter()],
  ['anthropicToolInterpreter', anthropicToolInterpreter()],
])('%s', (_name, interpreter) => {
  it('reads one tool call as an action carrying the call id and the assistant turn as history', () => {
    const content = [
      { type: 'text' as const, text: 'Adding.' },
      { type: 'tool_call' as const, ...call('c1') },
    ];
    const d = interpreter.interpret(reply({ text: 'Adding.', toolCalls: [call('c1')], content }), { tools });
    expect(d).toEqual({
      kind: 'action',
      action: { kind: 'tool_call', id: 'c1', name: 'add', arguments: { a: 1, b: 2 } },
      trajectoryRepr: 'add({"a":1,"b":2})',
      historyText: 'Adding.\nadd({"a":1,"b":2})',
      historyContent: content,
    });
  });

  it('refuses a text reply cut off at the token limit instead of taking it as the final answer', () => {
    const d = interpreter.interpret(reply({ text: 'The answer is', finishReason: 'length' }), { tools });
    expect(d).toMatchObject({
      kind: 'invalid',
      historyText: 'The answer is',
      historyContent: [{ type: 'text', text: 'The answer is' }],
    });
    expect(d.kind === 'invalid' && d.explanation).toBe(
      'Your reply was cut off at the output token limit before it ended. It was not taken as your final answer. Reply again, shorter: make one tool call with complete arguments, or give your final answer briefly.',
    );
  });

  it('refuses a tool call cut off at the token limit even when its arguments parse, and keeps the call in history to be answered', () => {
    const d = interpreter.interpret(reply({ toolCalls: [call('c1')], finishReason: 'length' }), { tools });
    expect(d).toMatchObject({
      kind: 'invalid',
      historyContent: [{ type: 'tool_call', id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }],
    });
    expect(d.kind === 'invalid' && d.explanation).toContain(
      'cut off at the output token limit before it ended. No tool ran.',
    );
  });

  it.each(['stop', 'tool_calls', 'other', undefined] as const)(
    'reads a reply with finish reason %s as usual',
    (finishReason) => {
      const d = interpreter.interpret(reply({ text: 'It is 3.', ...(finishReason ? { finishReason } : {}) }), {
        tools,
      });
      expect(d).toMatchObject({ kind: 'final', answer: 'It is 3.' });
    },
  );

  it('reads text without tool calls as the final answer', () => {
    const content = [{ type: 'text' as const, text: 'It is 3.' }];
    expect(interpreter.interpret(reply({ text: 'It is 3.', content }), { tools })).toEqual({
      kind: 'final',
      answer: 'It is 3.',
      historyText: 'It is 3.',
      historyContent: content,
    });
  });

  it.each([
    ['several tool calls', reply({ toolCalls: [call('c1'), call('c2')] }), 'You called 2 tools at once ("add", "add")'],
    [
      'arguments that are not JSON',
      reply({ toolCalls: [call('c1', '{"a":1,')] }),
      'are not a valid JSON object (received: {"a":1,)',
    ],
    ['arguments that are an array', reply({ toolCalls: [call('c1', [1, 2])] }), 'must be a JSON object, not an array'],
    ['arguments that are null', reply({ toolCalls: [call('c1', null as never)] }), 'must be a JSON object, not null'],
    [
      'an unknown tool',
      reply({ toolCalls: [{ id: 'c1', name: 'mul', arguments: {} }] }),
      'Your call to tool "mul" was not run: unknown tool "mul" (known tools: add)',
    ],
    [
      'arguments that break the schema',
      reply({ toolCalls: [call('c1', { a: 'one', b: 2 })] }),
      'Your call to tool "add" was not run: arguments of "add" do not match its schema: #/a: Instance type "string" is invalid. Expected "integer". Call a listed tool',
    ],
    [
      'an empty reply',
      reply({}),
      'Your reply was empty: it had no text and no tool call. Either call one of the tools (add)',
    ],
    ['a whitespace-only reply', reply({ text: '  \n' }), 'Your reply was empty'],
  ])('reads %s as invalid with a corrective explanation', (_case, r, expected) => {
    const d = interpreter.interpret(r, { tools });
    expect(d.kind).toBe('invalid');
    expect(d.kind === 'invalid' && d.explanation).toContain(expected);
  });

  it('keeps every tool call in historyContent of an invalid decision, so each gets answered', () => {
    const d = interpreter.interpret(reply({ toolCalls: [call('c1'), call('c2')] }), { tools });
    expect(
      d.historyContent?.filter((b) => b.type === 'tool_call').map((b) => (b.type === 'tool_call' ? b.id : '')),
    ).toEqual(['c1', 'c2']);
  });

  it('rebuilds history content from text and tool calls when the reply has no content', () => {
    const { content: _omit, ...bare } = reply({ text: 'Hm.', reasoning: 'think', toolCalls: [call('c9')] });
    const d = interpreter.interpret(bare, { tools });
    expect(d.historyContent).toEqual([
      { type: 'reasoning', text: 'think' },
      { type: 'text', text: 'Hm.' },
      { type: 'tool_call', ...call('c9') },
    ]);
  });

  it('is pure: the same reply gives the same decision', () => {
    const r = reply({ toolCalls: [call('c1')] });
    expect(interpreter.interpret(r, { tools })).toEqual(interpreter.interpret(r, { tools }));
  });
});

describe('parseArguments', () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['', {}],
    ['  ', {}],
    ['"{\\"a\\":1}"', { a: 1 }],
    ['{"a":1,', '{"a":1,'],
    ['"plain"', 'plain'],
    ['[1,2]', [1, 2]],
  ])('reads %j as %j', (raw, expected) => {
    expect(parseArguments(raw)).toEqual(expected);
  });

  it.each([
    ['a number past the double range', '{"a":1e400}'],
    ['a negative one inside an array', '{"a":[-1e400]}'],
    ['nesting past what a reply may hold', `{"a":${'['.repeat(98)}${']'.repeat(98)}}`],
  ])(
    'keeps arguments with %s raw, so the interpreter refuses the call instead of core refusing the whole reply',
    (_label, raw) => {
      expect(parseArguments(raw)).toBe(raw);
      const r = reply({ toolCalls: [call('c1', parseArguments(raw) as string)] });
      const decision = openAIToolInterpreter().interpret(r, { tools });
      expect(decision.kind).toBe('invalid');
      expect(decision.kind === 'invalid' && decision.explanation).toContain('are not a valid JSON object');
    },
  );

  it('still parses arguments nested as deep as a reply may hold them', () => {
    const raw = `{"a":${'['.repeat(97)}${']'.repeat(97)}}`;
    expect(parseArguments(raw)).toEqual(JSON.parse(raw));
  });
});
